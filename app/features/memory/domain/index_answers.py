"""The conditional index's answer: its tag, and the index unless the caller has it."""

from collections.abc import Mapping
from dataclasses import dataclass

from .index import BuiltIndex

_NOTHING_SERVED: Mapping[str, list[str]] = {}


@dataclass(frozen=True, slots=True)
class IndexAnswer:
    """The index route's result: the tag, and the index unless the caller has it."""

    tag: str
    built: BuiltIndex | None

    @property
    def files_served(self) -> Mapping[str, list[str]]:
        """``area/name`` served by scope (none on a 304): what the audit records."""
        return self.built.files if self.built is not None else _NOTHING_SERVED
