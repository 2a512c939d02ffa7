"""What an import from another memory tool may write: every note checked first."""

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from app.shared.errors import invalid_argument_error
from app.shared.locations import SEGMENT_RULE, Location, is_valid_segment

from ..domain import MemoryLimits, address_of
from ..domain.foreign_notes import MalformedSource, Note, decoded
from ..ports import FileMetadata
from ..ports.import_writes import Restore
from ..schemas import ForeignImport
from . import is_forbidden_name_char, require_area
from .content import METADATA_BUDGET_BYTES, require_within_limit

MAX_NAME_CHARS = 256
MAX_ALIAS_CHARS = 512
MAX_ALIASES = 256


def read_notes(
    parse: Callable[[str, str], list[Note]], sources: Sequence[tuple[str, bytes]]
) -> list[Note]:
    """Every note of every ``(name, bytes)`` source, in order, as ``parse`` reads
    it; a malformed source is InvalidArgumentError(path) naming its line."""
    try:
        return [
            note for name, data in sources for note in parse(decoded(data, name), name)
        ]
    except MalformedSource as error:
        raise invalid_argument_error("path", str(error)) from None


def checked_notes(
    request: ForeignImport,
    notes: Sequence[Note],
    limits: MemoryLimits,
    *,
    source: str,
    now: datetime,
) -> list[Restore]:
    """Each note as a file of the request's scope and area, all checked.

    A name that cannot be a file name, metadata over budget or a name two
    notes share is InvalidArgumentError(path) naming the note's origin; a body
    over the size limit is OversizeWriteError. Sources record ``source``.
    """
    area = require_area(request.area)
    origins: dict[str, str] = {}
    restores: list[Restore] = []
    for note in notes:
        _require_name(note)
        if note.name in origins:
            raise invalid_argument_error(
                "path",
                f"{note.origin} and {origins[note.name]} both become the file "
                f"{note.name!r}; rename one",
            )
        origins[note.name] = note.origin
        _require_metadata(note)
        where = Location(request.scope, area, note.name)
        address = address_of(where, request.entity_id)
        data = note.content.encode()
        require_within_limit(address, data, limits.max_file_bytes)
        metadata = FileMetadata(
            description=note.description,
            aliases=note.aliases,
            sources=(source,),
            last_updated=now.astimezone(UTC),
        )
        restores.append(Restore(address, data, metadata))
    return restores


def _require_name(note: Note) -> None:
    name = note.name
    if not is_valid_segment(name) or len(name) > MAX_NAME_CHARS:
        problem = f"{SEGMENT_RULE}, and have at most {MAX_NAME_CHARS} characters"
    elif any(is_forbidden_name_char(char) for char in name):
        problem = "must contain no invisible, separator or noncharacter code point"
    else:
        return
    raise invalid_argument_error(
        "path",
        f"{note.origin}: the name {name!r} cannot be a file name: a name {problem}",
    )


def _require_metadata(note: Note) -> None:
    """The bounds a write's aliases have, and the budget every file's metadata has."""
    aliases = note.aliases
    if len(aliases) > MAX_ALIASES or any(len(a) > MAX_ALIAS_CHARS for a in aliases):
        raise invalid_argument_error(
            "path",
            f"{note.origin}: it has {len(aliases)} aliases (tags and permalink); "
            f"at most {MAX_ALIASES} of at most {MAX_ALIAS_CHARS} characters each fit",
        )
    size = len(note.description.encode()) + len(json.dumps(list(aliases)).encode())
    if size > METADATA_BUDGET_BYTES:
        raise invalid_argument_error(
            "path",
            f"{note.origin}: its description and aliases take {size} bytes, over "
            f"the {METADATA_BUDGET_BYTES}-byte metadata limit",
        )
