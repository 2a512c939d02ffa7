"""A call's audit events as a draft: what building them needs, built later."""

from dataclasses import dataclass
from datetime import datetime

from ..ports import AuditEvent
from . import (
    Call,
    Outcome,
    call_events,
    call_scope,
    served_files,
)
from .fields import read_fields


@dataclass(frozen=True, slots=True)
class _Answered:
    """What events need of a result besides the files it listed: its version."""

    version: str | None


@dataclass(slots=True)  # not frozen: built per call, see AuditEvent
class CallDraft:
    """A call's events, to be built when a buffered log writes them.

    Holds what building needs, taken when the call ended (``draft_call``):
    the events are the ones building them then would have given.
    """

    call: Call
    request: object
    outcome: Outcome
    at: datetime
    made_ns: int
    served: dict[str, list[str]] | None = None

    @property
    def size(self) -> int:
        if call_scope(self.request) is not None or not self.call.grants:
            return 1
        return len(self.call.grants)

    def events(self) -> list[AuditEvent]:
        return call_events(
            self.call,
            self.request,
            self.outcome,
            at=self.at,
            made_ns=self.made_ns,
            served=self.served,
        )


def draft_call(
    call: Call, request: object, outcome: Outcome, *, at: datetime, made_ns: int
) -> CallDraft:
    """A draft of the call's events that keeps no file content.

    A result is kept as its version and the ``area/name`` texts it listed, and
    a refused call's request as the fields its events read, so a buffer of
    drafts never holds the bodies its reads answered or its refused writes
    sent, nor the models an index answered: hundreds of tracked objects per
    call, which the garbage collector would walk for as long as the draft waits.
    """
    if outcome.code != "ok":
        return CallDraft(call, read_fields(request), outcome, at, made_ns)
    result = outcome.result
    if result is None:
        return CallDraft(call, request, outcome, at, made_ns)
    served = served_files(result)  # {} for a result that lists nothing
    version = getattr(result, "version", None)
    answered = _Answered(version if isinstance(version, str) else None)
    return CallDraft(call, request, Outcome("ok", answered), at, made_ns, served)
