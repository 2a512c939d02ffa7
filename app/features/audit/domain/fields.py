"""What an audit event reads of a request: five named text fields, never a body."""

from collections.abc import Mapping

from pydantic import BaseModel


def as_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def field_of(request: object, name: str) -> str | None:
    """A text field of a request model, or of the raw fields of a refused one."""
    # Annotated names, not cast(): a cast call builds its type argument, a
    # generic alias, every time; an annotation of a local is never evaluated.
    if type(request) is dict:  # HTTP's fields: skip the slower ABC check
        fields: dict[str, object] = request  # pyright: ignore[reportUnknownVariableType]
        return as_text(fields.get(name))
    if isinstance(request, Mapping):
        mapping: Mapping[str, object] = request  # pyright: ignore[reportUnknownVariableType]
        return as_text(mapping.get(name))
    if not _may_have(type(request), name):
        return None  # a pydantic model asked for what it lacks raises inside: ~6 us
    return as_text(getattr(request, name, None))


def _may_have(kind: type, name: str) -> bool:
    return not issubclass(kind, BaseModel) or model_has(kind, name)


def model_has(model: type[BaseModel], name: str) -> bool:
    """Whether ``model`` has a field or property ``name`` (asking costs no error)."""
    return name in model.model_fields or isinstance(
        getattr(model, name, None), property
    )


_READ_FIELDS = ("scope", "entity_id", "area", "name", "expected_version")


def read_fields(request: object) -> dict[str, str | None]:
    """The fields of a request its events read (never a body): the same events."""
    if type(request) is dict:  # HTTP's fields and drafts' own: no per-name dispatch
        fields: dict[str, object] = request  # pyright: ignore[reportUnknownVariableType]
        return _dict_fields(fields)
    return {name: field_of(request, name) for name in _READ_FIELDS}


def _dict_fields(request: dict[str, object]) -> dict[str, str | None]:
    # Spelled out, a name a line: every read's event is built from one, and a
    # comprehension over the names costs as much again.
    get = request.get
    scope, entity, area = get("scope"), get("entity_id"), get("area")
    name, expected = get("name"), get("expected_version")
    return {
        "scope": scope if isinstance(scope, str) else None,
        "entity_id": entity if isinstance(entity, str) else None,
        "area": area if isinstance(area, str) else None,
        "name": name if isinstance(name, str) else None,
        "expected_version": expected if isinstance(expected, str) else None,
    }
