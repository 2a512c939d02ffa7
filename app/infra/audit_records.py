"""Audit events as JSON records: the line format of the file and stream logs.

A record holds the event's public fields plus its ``id`` and ``entity_id``
(operators answering "what was read about this entity" need it). ``at`` always
carries six fractional digits, so records sort by time as plain strings.
"""

import json
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


def event_to_line(event: AuditEvent) -> str:
    record = event_to_record(event)
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def event_from_record(record: dict[str, Any]) -> AuditEvent:
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
        files_omitted=record["files_omitted"],
    )
