"""Notes read from another memory tool: what each becomes, and why one is refused."""

import re
from dataclasses import dataclass

LINE_BREAK_RUN = re.compile(r"\s*[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+\s*")


@dataclass(frozen=True, slots=True)
class Note:
    """One file an import would write, and where in the source it came from."""

    name: str
    content: str
    description: str
    aliases: tuple[str, ...]
    origin: str
    """What an error names: ``memory.json line 3``, ``people/ada.md``."""


class MalformedSource(ValueError):
    """The source cannot be read as its format says; ``origin`` names the line."""

    def __init__(self, origin: str, detail: str) -> None:
        super().__init__(f"{origin}: {detail}")
        self.origin = origin
        self.detail = detail


def one_line(text: str) -> str:
    """``text`` with every line break (and the blanks around it) as one space."""
    return LINE_BREAK_RUN.sub(" ", text).strip()


def distinct(values: list[str]) -> tuple[str, ...]:
    """Non-blank values, first occurrence kept, order kept."""
    return tuple(dict.fromkeys(value for value in values if value))


def decoded(data: bytes, origin: str) -> str:
    """UTF-8 text without a byte-order mark; bad bytes refused naming their line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise MalformedSource(f"{origin} line {line}", "is not UTF-8 text") from None
    return text.removeprefix("\ufeff")
