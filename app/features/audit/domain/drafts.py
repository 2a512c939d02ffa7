"""A call's audit events as a draft: what building them needs, built later."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from ..ports import AuditEvent
from . import Call, Outcome, event_count, events_of, result_parts
from .fields import read_fields


@dataclass(slots=True)  # not frozen: built per call, see AuditEvent
class CallDraft:
    """A call's events, to be built when a buffered log writes them.

    Holds what building needs, taken when the call ended (``draft_call``):
    the request's fields, the outcome's code, the version and the files the
    result gave. The events are the ones building them then would have given.
    """

    call: Call
    fields: dict[str, str | None]
    code: str
    version: str | None
    served: Mapping[str, list[str]]
    at: datetime
    made_ns: int
    size: int

    def events(self) -> list[AuditEvent]:
        return events_of(
            self.call,
            self.fields,
            self.code,
            self.version,
            self.served,
            at=self.at,
            made_ns=self.made_ns,
        )


def draft_call(
    call: Call, request: object, outcome: Outcome, *, at: datetime, made_ns: int
) -> CallDraft:
    """A draft of the call's events that keeps no file content.

    A request is kept as the fields its events read and a result as its
    version and the ``area/name`` texts it listed, so a buffer of drafts never
    holds the bodies its reads answered or its refused writes sent, nor the
    models an index answered: hundreds of tracked objects per call, which the
    garbage collector would walk for as long as the draft waits.
    """
    fields = read_fields(request)
    version, served = result_parts(fields, outcome)
    size = event_count(call, fields["scope"])
    return CallDraft(call, fields, outcome.code, version, served, at, made_ns, size)
