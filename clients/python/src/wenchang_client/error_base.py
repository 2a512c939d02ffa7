"""The base of every client exception: its code, category and payload fields."""

from collections.abc import Mapping
from typing import Any, ClassVar

_PAYLOAD_TYPES = (str, int)


def _field(details: Mapping[str, object], key: str, kind: type) -> Any:
    value = details.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"error payload field {key!r} is not a {kind.__name__}")
    return value


def _optional_text(details: Mapping[str, object], key: str) -> str | None:
    value = details.get(key)
    return value if isinstance(value, str) else None


class WenchangError(Exception):
    """A failure reported by Wenchang; ``details`` is its payload."""

    code: ClassVar[str] = "WENCHANG_ERROR"
    category: ClassVar[str] = "internal"

    def __init_subclass__(
        cls, code: str | None = None, category: str | None = None, **kwargs: Any
    ) -> None:
        """``class XError(Base, code="X")`` names the code a class stands for."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
        if category is not None:
            cls.category = category

    def __init__(
        self, message: str, details: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.scope = _optional_text(self.details, "scope")
        self.area = _optional_text(self.details, "area")
        self.name = _optional_text(self.details, "name")
        self.retry_after_seconds: float | None = None
        for cls in type(self).__mro__:
            for key, kind in vars(cls).get("__annotations__", {}).items():
                if kind in _PAYLOAD_TYPES:
                    setattr(self, key, _field(self.details, key, kind))
