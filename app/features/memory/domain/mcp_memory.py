"""The MCP reference memory server's memory.json read as one note per entity.

The file is JSON Lines: ``{"type": "entity", "name", "entityType",
"observations": [...]}`` and ``{"type": "relation", "from", "to",
"relationType"}``, one object a line. Each entity becomes a note named after it:
its observations ``- [stated]`` fact lines, its outgoing relations a
``## Relations`` list (``- works_at [[Acme]]``), its type the description.
"""

import json
from dataclasses import dataclass, field
from typing import cast

from .foreign_notes import MalformedSource, Note, one_line


@dataclass(slots=True)
class _Entity:
    line: int
    entity_type: str
    observations: list[str]
    relations: list[str] = field(default_factory=list[str])


def _text(item: dict[str, object], key: str, origin: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise MalformedSource(origin, f"{key!r} must be a string")
    return value


def _texts(item: dict[str, object], key: str, origin: str) -> list[str]:
    value = item.get(key)
    values = cast("list[object]", value) if isinstance(value, list) else None
    if values is None or not all(isinstance(v, str) for v in values):
        raise MalformedSource(origin, f"{key!r} must be a list of strings")
    return [str(v) for v in values]


def _object(line: str, origin: str) -> dict[str, object]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise MalformedSource(
            origin, f"is not JSON ({error.msg}, column {error.colno})"
        ) from None
    if not isinstance(item, dict):
        raise MalformedSource(origin, "is not a JSON object")
    return {
        str(key): value for key, value in cast("dict[object, object]", item).items()
    }


def parse_mcp_memory(text: str, source: str) -> list[Note]:
    """Every entity of ``text`` as a note, in file order; blank lines skipped.

    Raises MalformedSource naming the line of the first thing that is not an
    entity or relation as the server writes them, of an entity named twice,
    and of a relation from an entity the file does not hold.
    """
    entities: dict[str, _Entity] = {}
    relations: list[tuple[str, str, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        origin = f"{source} line {number}"
        item = _object(raw, origin)
        kind = item.get("type")
        if kind == "entity":
            name = _text(item, "name", origin)
            if name in entities:
                first = entities[name].line
                raise MalformedSource(
                    origin, f"entity {name!r} is already defined on line {first}"
                )
            entity_type = _text(item, "entityType", origin)
            observed = _texts(item, "observations", origin)
            entities[name] = _Entity(number, entity_type, observed)
        elif kind == "relation":
            start, end = _text(item, "from", origin), _text(item, "to", origin)
            relation = _text(item, "relationType", origin)
            relations.append(
                (
                    origin,
                    start,
                    f"- {one_line(relation) or 'relates_to'} [[{one_line(end)}]]",
                )
            )
        else:
            raise MalformedSource(
                origin, f"type must be 'entity' or 'relation', not {kind!r}"
            )
    for origin, start, line in relations:
        entity = entities.get(start)
        if entity is None:
            raise MalformedSource(
                origin, f"relation from {start!r}, which no entity line defines"
            )
        if line not in entity.relations:
            entity.relations.append(line)
    return [_note(name, entity, source) for name, entity in entities.items()]


def _note(name: str, entity: _Entity, source: str) -> Note:
    facts = [one_line(o) for o in entity.observations]
    lines = [f"- [stated] {fact}" for fact in facts if fact]
    if entity.relations:
        lines += ["", "## Relations"] if lines else ["## Relations"]
        lines += entity.relations
    return Note(
        name=name,
        content="".join(f"{line}\n" for line in lines),
        description=one_line(entity.entity_type),
        aliases=(),
        origin=f"{source} line {entity.line}",
    )
