"""Audit events as JSON records: the line format of the file and stream logs.

A record holds the event's public fields plus its ``id`` and ``entity_id``
(operators answering "what was read about this entity" need it). ``at`` always
carries six fractional digits, so records sort by time as plain strings.
``event_to_record`` is the list of a record's fields the way back is made
from; ``event_to_json`` writes the same record as text.
"""

from json.encoder import encode_basestring
from typing import Any

from app.features.audit.domain.marks import parse_stamp, stamp
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


_quote = encode_basestring
"""A str as ``json.dumps(..., ensure_ascii=False)`` writes it (C, one call)."""
_QUOTED: dict[str, str] = {}
"""Who-and-what texts already quoted (surface, actor, token id, operation,
scope, entity, outcome): they repeat from event to event, and quoting one is a
pass over its characters. Never a file's area or name: a purge leaves no copy
of those behind, not even here."""
MAX_QUOTED = 1024


def _text(value: str | None) -> str:
    return "null" if value is None else _quote(value)


def _known(value: str | None) -> str:
    if value is None:
        return "null"
    quoted = _QUOTED.get(value)
    if quoted is None:
        if len(_QUOTED) >= MAX_QUOTED:
            _QUOTED.clear()
        quoted = _QUOTED[value] = _quote(value)
    return quoted


def event_to_json(
    event: AuditEvent, *, subject: str | None = None, at: str | None = None
) -> str:
    """``event_to_record`` as compact JSON (``subject`` appended when given).

    The text is what ``json.dumps(record, ensure_ascii=False, separators=(",",
    ":"))`` writes (``tests/test_audit_records.py`` holds them equal for any
    text): one f-string of quoted fields, the repeating ones quoted once.
    ``at`` is ``stamp(event.at)`` when the caller has it already.
    """
    e = event
    files = ",".join(map(_quote, e.files))
    tail = "" if subject is None else f',"subject":{_quote(subject)}'
    return (
        f'{{"id":{_quote(e.id)},"at":"{at or stamp(e.at)}",'
        f'"request_id":{_quote(e.request_id)},"surface":{_known(e.surface)},'
        f'"actor":{_known(e.actor)},"token_id":{_known(e.token_id)},'
        f'"operation":{_known(e.operation)},"scope":{_known(e.scope)},'
        f'"entity_id":{_known(e.entity_id)},"area":{_text(e.area)},'
        f'"name":{_text(e.name)},"outcome":{_known(e.outcome)},'
        f'"version":{_text(e.version)},"files":[{files}],'
        f'"files_omitted":{e.files_omitted:d}{tail}}}'
    )


def event_to_line(event: AuditEvent) -> str:
    return event_to_json(event) + "\n"


def event_from_record(record: dict[str, Any]) -> AuditEvent:
    fields: dict[str, Any] = {
        **record,
        "at": parse_stamp(record["at"]),
        "files": tuple(record["files"]),
    }
    return AuditEvent(**fields)
