"""Audit events as JSON records: the line format of the file and stream logs.

A record holds the event's public fields plus its ``id`` and ``entity_id``
(operators answering "what was read about this entity" need it). ``at`` always
carries six fractional digits, so records sort by time as plain strings.
``event_to_record`` is the one list of a record's fields: the JSON text and
the way back are made from it.
"""

from _json import make_encoder
from json.encoder import encode_basestring
from typing import Any

from app.features.audit.domain import parse_stamp, stamp
from app.features.audit.ports import AuditEvent


def event_to_record(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "at": stamp(event.at),
        "request_id": event.request_id,
        "surface": event.surface,
        "actor": event.actor,
        "token_id": event.token_id,
        "operation": event.operation,
        "scope": event.scope,
        "entity_id": event.entity_id,
        "area": event.area,
        "name": event.name,
        "outcome": event.outcome,
        "version": event.version,
        "files": list(event.files),
        "files_omitted": event.files_omitted,
    }


def _unserialisable(value: object) -> object:
    raise TypeError(f"an audit record holds no {type(value).__name__}")


# json.dumps(record, ensure_ascii=False, separators=(",", ":")) builds this C
# encoder afresh on every call; built once, a record's text costs what the
# hand-written f-string it replaced did. No circular-reference bookkeeping
# (markers=None): a record is flat.
_encode = make_encoder(
    None, _unserialisable, encode_basestring, None, ":", ",", False, False, True
)


def event_to_json(event: AuditEvent, *, subject: str | None = None) -> str:
    """``event_to_record`` as compact JSON (``subject`` appended when given).

    The text is what ``json.dumps(record, ensure_ascii=False, separators=(",",
    ":"))`` writes.
    """
    record = event_to_record(event)
    if subject is not None:
        record["subject"] = subject
    return record_to_json(record)


def record_to_json(record: dict[str, Any]) -> str:
    return "".join(_encode(record, 0))


def event_to_line(event: AuditEvent) -> str:
    return event_to_json(event) + "\n"


def event_from_record(record: dict[str, Any]) -> AuditEvent:
    fields: dict[str, Any] = {
        **record,
        "at": parse_stamp(record["at"]),
        "files": tuple(record["files"]),
    }
    return AuditEvent(**fields)
