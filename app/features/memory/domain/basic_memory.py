"""A basic-memory markdown note read as one note: front matter, then its body.

The front matter (YAML between ``---`` fences) gives the metadata: ``title``
(else the file's stem) names the file, ``description`` (else ``type``, default
``note``) describes it, ``permalink``, ``aliases`` and ``tags`` become aliases.
The body is kept as written, except that each observation, a top-level list
item ``- [category] text #tag (context)``, becomes a fact line: ``- [stated]
category: text #tag (context)`` (a category that is a Wenchang label stays the
label), and a list item with a ``#tag`` but no category becomes ``- [stated]
text #tag``. Relations (``- relation_type [[Target]]``), prose and fenced code
are kept as they are.
"""

import re
from datetime import date
from pathlib import PurePosixPath
from typing import cast

import yaml

from .foreign_notes import MalformedSource, Note, distinct, one_line

LABELS = frozenset({"stated", "observed", "inferred", "system"})
OBSERVATION = re.compile(r"[-*+] \[([^\[\]()]+)\]\s+(\S.*)")
LIST_ITEM = re.compile(r"[-*+] (\S.*)")
CLOCK = re.compile(r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?")
FENCE = re.compile(r" {0,3}(```|~~~)")


def parse_basic_memory(text: str, relative: str) -> list[Note]:
    """The note of one file; ``relative`` is its path below the imported folder.

    Raises MalformedSource naming the line of an unclosed front matter, a YAML
    error, or a field of the wrong kind.
    """
    lines = text.split("\n")
    fields: dict[str, object] = {}
    body_start = 0
    if lines[0].rstrip("\r") == "---":
        end = next(
            (
                i
                for i in range(1, len(lines))
                if lines[i].rstrip("\r") in ("---", "...")
            ),
            None,
        )
        if end is None:
            raise MalformedSource(
                f"{relative} line 1", "front matter opened here is never closed"
            )
        fields = _front_matter(lines[1:end], relative)
        body_start = end + 1
    body = "\n".join(_converted(lines[body_start:]))
    return [_note(fields, lines[1:body_start], body.lstrip("\r\n"), relative)]


def _front_matter(lines: list[str], relative: str) -> dict[str, object]:
    try:
        loaded = yaml.safe_load("\n".join(lines))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = 2 + (mark.line if mark else 0)
        raise MalformedSource(
            f"{relative} line {line}",
            f"front matter is not YAML: {error.problem or error}",
        ) from None
    except yaml.YAMLError as error:
        raise MalformedSource(
            f"{relative} line 2", f"front matter is not YAML: {error}"
        ) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise MalformedSource(f"{relative} line 2", "front matter is not a mapping")
    return {str(k): v for k, v in cast("dict[object, object]", loaded).items()}


def _note(
    fields: dict[str, object], front: list[str], body: str, relative: str
) -> Note:
    def where(key: str) -> str:
        pattern = re.compile(rf"{re.escape(key)}\s*:")
        found = next((i for i, line in enumerate(front) if pattern.match(line)), 0)
        return f"{relative} line {found + 2}"

    def scalar(key: str, default: str) -> str:
        value = fields.get(key)
        if value is None:
            return default
        if isinstance(value, (str, int, float, bool, date)):
            return one_line(
                value.isoformat() if isinstance(value, date) else str(value)
            )
        raise MalformedSource(where(key), f"{key} must be a single value")

    def listed(key: str) -> list[str]:
        value = fields.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [one_line(part).removeprefix("#") for part in value.split(",")]
        items = cast("list[object]", value) if isinstance(value, list) else None
        if items is None or any(isinstance(i, (list, dict)) for i in items):
            raise MalformedSource(where(key), f"{key} must be a list or a string")
        return [one_line(str(item)).removeprefix("#") for item in items]

    title = scalar("title", PurePosixPath(relative).stem)
    permalink = scalar("permalink", "")
    aliases = [permalink if permalink != title else "", *listed("aliases")]
    return Note(
        name=title,
        content=body,
        description=scalar("description", "") or scalar("type", "note"),
        aliases=distinct([*aliases, *listed("tags")]),
        origin=where("title") if "title" in fields else relative,
    )


def _converted(lines: list[str]) -> list[str]:
    """The body's lines, observations outside fenced code as fact lines."""
    fence = ""
    result: list[str] = []
    for line in lines:
        opened = FENCE.match(line)
        if opened and (not fence or opened.group(1) == fence):
            fence = "" if fence else opened.group(1)
        result.append(line if fence or opened else _fact_line(line))
    return result


def _fact_line(line: str) -> str:
    ending = "\r" if line.endswith("\r") else ""
    bare = line.removesuffix("\r")
    observed = OBSERVATION.fullmatch(bare)
    if observed:
        category, text = observed.group(1).strip(), observed.group(2)
        if not _is_category(category):
            return line
        if category.lower() in LABELS:
            return f"- [{category.lower()}] {text}{ending}"
        return f"- [stated] {category}: {text}{ending}"
    item = LIST_ITEM.fullmatch(bare)
    if item and _is_tagged(item.group(1)):
        return f"- [stated] {item.group(1)}{ending}"
    return line


def _is_category(category: str) -> bool:
    """Not a checkbox (``[ ]``, ``[x]``, ``[-]``, ``[?]``) nor a clock time."""
    if not category or CLOCK.fullmatch(category):
        return False
    return len(category) != 1 or (category.isalnum() and category not in "xX")


def _is_tagged(text: str) -> bool:
    """An untitled observation: a ``#tag`` word, no link, no checkbox."""
    if "[[" in text or text.startswith("["):
        return False
    return any(word.startswith("#") and len(word) > 1 for word in text.split())
