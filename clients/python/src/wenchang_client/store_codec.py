"""How a LangGraph item is a Wenchang file, both ways.

Every item of a store is a file of one area. Its name encodes the namespace and
key readably (labels joined by ``.``, which a label never holds, then ``:`` and
the key; a character a name cannot hold is ``%`` and six hex digits), hashed
when too long. The exact namespace and key, the item's creation time and
whatever the body does not hold ride in the description as one line of JSON,
so everything round trips. A value shaped ``{"content": str, ...}`` is stored as
that markdown (so the index, search and the browser show it as a memory); any
other value as its JSON text.
"""

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

MAX_NAME = 256
DESCRIPTION_BUDGET = 4000
"""What the description may spend (the server allows one line of 4096 chars)."""
_ESCAPED = re.compile(r"%([0-9A-F]{6})")


def _forbidden(char: str) -> bool:
    point = ord(char)
    if char in "/\\%" or 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE:
        return True
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def _escape(text: str, also: str = "") -> str:
    return "".join(f"%{ord(c):06X}" if _forbidden(c) or c in also else c for c in text)


def unescape(text: str) -> str:
    return _ESCAPED.sub(lambda match: chr(int(match.group(1), 16)), text)


def file_name(namespace: tuple[str, ...], key: str) -> str:
    """The file name of an item: readable, unique per (namespace, key)."""
    labels = ".".join(_escape(label, ":") for label in namespace)
    name = f"{labels}:{_escape(key)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{name[: MAX_NAME - 34]}~{digest}"


@dataclass(frozen=True, slots=True)
class Stored:
    """What a file holds of an item."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: str


def _meta(namespace: tuple[str, ...], key: str, created_at: str) -> dict[str, Any]:
    return {"langgraph": 1, "namespace": list(namespace), "key": key, "at": created_at}


def encode(
    namespace: tuple[str, ...], key: str, value: dict[str, Any], created_at: str
) -> tuple[str, str]:
    """(content, description) of the item's file."""
    meta = _meta(namespace, key, created_at)
    content = value.get("content")
    if isinstance(content, str):
        # The rest of the value, in order, with the content's place kept.
        rest = {k: (None if k == "content" else v) for k, v in value.items()}
        description = json.dumps(meta | {"rest": rest}, separators=(",", ":"))
        if len(description) <= DESCRIPTION_BUDGET:
            return content, description
    description = json.dumps(meta, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=1), description


def meta_of(description: str) -> dict[str, Any] | None:
    """The description's item fields, None for a file that is not an item."""
    try:
        meta: Any = json.loads(description)
    except ValueError:
        return None
    if not isinstance(meta, dict) or cast(dict[str, Any], meta).get("langgraph") != 1:
        return None
    return cast(dict[str, Any], meta)


def decode(meta: dict[str, Any], content: str) -> Stored:
    namespace = tuple(str(label) for label in meta["namespace"])
    rest = meta.get("rest")
    if isinstance(rest, dict):
        value = dict(cast(dict[str, Any], rest))
        value["content"] = content
    else:
        value = cast(dict[str, Any], json.loads(content))
    return Stored(namespace, str(meta["key"]), value, str(meta["at"]))


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
