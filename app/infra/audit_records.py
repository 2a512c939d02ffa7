"""Audit events as JSON records: the line format of the file and stream logs.

A record holds the event's public fields plus its ``id`` and ``entity_id``
(operators answering "what was read about this entity" need it). ``at`` always
carries six fractional digits, so records sort by time as plain strings.
``event_to_record`` is the list of a record's fields the way back is made
from; ``event_to_json`` writes the same record as text.
"""

from json.encoder import encode_basestring
from typing import NotRequired, TypedDict

from app.features.audit.domain.marks import parse_stamp, stamp
from app.features.audit.ports import AuditEvent


class AuditRecord(TypedDict):
    """An event as its JSON line holds it."""

    id: str
    at: str
    request_id: str
    surface: str
    actor: str
    token_id: str | None
    operation: str
    scope: str | None
    entity_id: str | None
    area: str | None
    name: str | None
    outcome: str
    version: str | None
    files: list[str]
    files_omitted: NotRequired[int]
    """Absent: the event's default (0)."""


def event_to_record(event: AuditEvent) -> AuditRecord:
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


def _known(value: str | None) -> str:
    if value is None:
        return "null"
    quoted = _QUOTED.get(value)
    if quoted is None:
        if len(_QUOTED) >= MAX_QUOTED:
            _QUOTED.clear()
            _WHO.clear()  # what it holds is quoted from here: forgotten with it
        quoted = _QUOTED[value] = _quote(value)
    return quoted


type _Who = tuple[str, str, str | None, str, str | None, str | None]
_WHO: dict[_Who, str] = {}
"""The record's run from ``surface`` to ``entity_id`` by those six texts, made
once: consecutive events mostly share all six, and one look-up of them costs
less than quoting (or looking up) each."""


def _who(who: _Who) -> str:
    text = _WHO.get(who)
    if text is None:
        surface, actor, token_id, operation, scope, entity_id = map(_known, who)
        text = (
            f'"surface":{surface},"actor":{actor},"token_id":{token_id},'
            f'"operation":{operation},"scope":{scope},"entity_id":{entity_id}'
        )
        if len(_WHO) >= MAX_QUOTED:
            _WHO.clear()
        _WHO[who] = text
    return text


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
    who = (e.surface, e.actor, e.token_id, e.operation, e.scope, e.entity_id)
    area, name, version = e.area, e.name, e.version
    files = ",".join(map(_quote, e.files)) if e.files else ""
    tail = "" if subject is None else f',"subject":{_quote(subject)}'
    # area, name and version quoted in line: a call each costs as much again.
    return (
        f'{{"id":{_quote(e.id)},"at":"{at or stamp(e.at)}",'
        f'"request_id":{_quote(e.request_id)},{_who(who)},'
        f'"area":{"null" if area is None else _quote(area)},'
        f'"name":{"null" if name is None else _quote(name)},'
        f'"outcome":{_known(e.outcome)},'
        f'"version":{"null" if version is None else _quote(version)},'
        f'"files":[{files}],"files_omitted":{e.files_omitted:d}{tail}}}'
    )


def event_to_line(event: AuditEvent) -> str:
    return event_to_json(event) + "\n"


def event_from_record(record: AuditRecord) -> AuditEvent:
    return AuditEvent(
        id=record["id"],
        at=parse_stamp(record["at"]),
        request_id=record["request_id"],
        surface=record["surface"],
        actor=record["actor"],
        token_id=record["token_id"],
        operation=record["operation"],
        scope=record["scope"],
        entity_id=record["entity_id"],
        area=record["area"],
        name=record["name"],
        outcome=record["outcome"],
        version=record["version"],
        files=tuple(record["files"]),
        files_omitted=record.get("files_omitted", 0),
    )
