"""The per-call copy of the app's context keeps every shared field."""

from dataclasses import fields, replace
from typing import Any

from app.server.context import AppContext, Services
from app.shared.identity import Grant, Identity

NAMES = [f.name for f in fields(AppContext)]


def _context_of_distinct_values() -> AppContext:
    values: dict[str, Any] = {name: object() for name in NAMES}
    return AppContext(**values)


def test_a_call_copy_changes_only_who_calls_and_which_request() -> None:
    base = _context_of_distinct_values()
    identity = Identity(grants={"user": Grant("alice", "owner")})

    called = base.for_call(
        identity, request_id="r-1", caller="c-1", surface="mcp", call_key="k-1"
    )

    expected = replace(
        base,
        identity=identity,
        request_id="r-1",
        caller="c-1",
        surface="mcp",
        call_key="k-1",
    )
    assert [getattr(called, n) for n in NAMES] == [getattr(expected, n) for n in NAMES]


def test_a_call_copy_keeps_the_caller_and_surface_it_is_not_given() -> None:
    base = _context_of_distinct_values()
    identity = Identity(grants={})

    called = base.for_call(identity, request_id="r-2")

    assert called.caller is base.caller
    assert called.surface is base.surface
    assert called.identity is identity and called.request_id == "r-2"
    assert called.call_key == ""  # a key names one call, never the next


def test_a_copy_for_the_calls_writes_changes_only_its_audit_event() -> None:
    base = _context_of_distinct_values()
    event: Any = object()

    carrying = base.with_audit_event(event)

    expected = replace(base, audit_event=event)
    assert [getattr(carrying, n) for n in NAMES] == [
        getattr(expected, n) for n in NAMES
    ]
    assert base.with_audit_event(None).audit_event is None


def test_every_shared_port_and_rule_reads_as_the_contexts_own() -> None:
    values: dict[str, Any] = {f.name: object() for f in fields(Services)}

    context = AppContext(Services(**values))

    assert {name: getattr(context, name) for name in values} == values
