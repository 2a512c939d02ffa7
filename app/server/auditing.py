"""The one wrapper every surface runs an operation call through to audit it.

HTTP routes reach it as ``context.audited`` (one place: the feature's route
binding), MCP tools and operator tasks through ``audited_use_case`` where the
composition root serves them; an operation added later is audited by being
served, with no code of its own.
"""

import functools
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tenchi.errors import AppError

from app.features.audit.domain import (
    INTERNAL,
    Call,
    Outcome,
    call_events,
    call_scope,
    ok_event,
)
from app.features.audit.domain.drafts import draft_call
from app.features.audit.ports import AuditEvent, PendingEvent

if TYPE_CHECKING:
    from app.server.context import AppContext

AUDITED = "__wenchang_audited__"


def _call(context: "AppContext", operation: str) -> Call:
    identity = context.identity
    return Call(
        operation=operation,
        surface=context.surface,
        actor=context.source,
        token_id=identity.token_id if identity is not None else None,
        request_id=context.request_id or os.urandom(16).hex(),
        grants=identity.grants if identity is not None else {},
    )


async def record_call(
    context: "AppContext",
    operation: str,
    request: object,
    outcome: Outcome,
    *,
    durable: bool,
) -> None:
    if not durable:
        return record_later(context, operation, request, outcome)
    call = _call(context, operation)
    events = call_events(call, request, outcome, at=context.clock())
    await context.audit.record(events, durable=True)


def record_later(
    context: "AppContext", operation: str, request: object, outcome: Outcome
) -> None:
    """Record a call whose events may wait: they are built when the log writes."""
    call = _call(context, operation)
    at, made_ns = context.clock(), time.time_ns()
    context.audit.record_later(
        draft_call(call, request, outcome, at=at, made_ns=made_ns)
    )


def _pending(
    context: "AppContext", operation: str, request: object
) -> PendingEvent | None:
    """The event a write of this call may commit with its change (one scope only)."""
    if call_scope(request) is None:
        return None
    call = _call(context, operation)

    def build() -> AuditEvent:
        event = ok_event(call, request, at=context.clock())
        assert event is not None  # call_scope found its one scope
        return event

    return PendingEvent(build)


async def audited[T](
    context: "AppContext",
    operation: str,
    request: object,
    run: Callable[["AppContext"], Awaitable[T]],
    *,
    mutates: bool,
    with_change: bool = True,
) -> T:
    """Run one call of ``operation`` and record its event(s), refusals included.

    ``request`` is the operation's request, or the raw fields of a call refused
    before its request could be built. ``run`` gets the context the call runs
    with. A mutation's event is offered to its write (``with_change``): the
    context given to ``run`` carries it as ``audit_event``, the use case puts it
    on its ``Change``, and storage sharing a database with the log commits it
    in the change's own transaction, and the event then says ``ok`` even if
    the call failed after its change landed. Otherwise a mutation that
    succeeded is recorded durably before this returns, so an acknowledged
    change always has its event; if that record fails, the caller gets
    BACKEND_UNAVAILABLE instead of an acknowledgement. Every other event may
    wait in the log's buffer.
    """
    pending = _pending(context, operation, request) if mutates and with_change else None
    inner = context
    if pending is not None or context.audit_event is not None:
        # Only this call's writes may commit its event, never a nested call's.
        inner = context.with_audit_event(pending)
    try:
        result = await run(inner)
    except AppError as exc:
        _record_refusal(context, operation, request, exc.code, pending)
        raise
    except Exception:  # recorded as INTERNAL, then re-raised unchanged
        _record_refusal(context, operation, request, INTERNAL, pending)
        raise
    if pending is not None and pending.committed:
        return result
    outcome = Outcome("ok", result)
    if mutates:
        await record_call(context, operation, request, outcome, durable=True)
    else:
        record_later(context, operation, request, outcome)
    return result


def _record_refusal(
    context: "AppContext",
    operation: str,
    request: object,
    code: str,
    pending: PendingEvent | None,
) -> None:
    if pending is not None and pending.committed:
        return  # its change landed: the event committed with it is the call's
    record_later(context, operation, request, Outcome(code))


def audited_use_case[T](
    operation: str,
    use_case: Callable[..., Awaitable[T]],
    *,
    mutates: bool,
    with_change: bool = True,
) -> Callable[..., Awaitable[T]]:
    """``use_case`` (given ``request`` and ``context``) with every call audited.

    ``with_change=False`` for a call of many writes (an import): its event
    tells the whole call's outcome, so no single write commits it.
    """

    @functools.wraps(use_case)
    async def run(**inputs: Any) -> T:
        context: AppContext = inputs["context"]
        request = inputs.get("request")
        return await audited(
            context,
            operation,
            request,
            lambda called: use_case(**{**inputs, "context": called}),
            mutates=mutates,
            with_change=with_change,
        )

    return mark_audited(run, operation)


def mark_audited[F](function: F, operation: str) -> F:
    """Label a served callable as audited, for the test that every one is."""
    vars(function)[AUDITED] = operation
    return function


def audited_operation(function: object) -> str | None:
    """The operation a served callable records, or None if it records nothing."""
    found = getattr(function, AUDITED, None)
    return found if isinstance(found, str) else None
