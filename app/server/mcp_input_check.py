"""A tool's input schema compiled to plain checks: jsonschema's verdict, no walk.

Tenchi checks every call's arguments against the tool's JSON Schema with the
pure-Python `jsonschema` package: ~55 us for a `read_file` call, a tenth of an
HTTP read. The served tools' input schemas use a handful of keywords
(`KEYWORDS`); `compiled` turns such a schema into nested closures that give
the same verdict as `jsonschema.Draft202012Validator.is_valid`, keyword for
keyword as that validator defines them, and returns None for a schema with any
other keyword (that tool keeps jsonschema). `tests/test_mcp_input_check.py`
holds the two to the same verdict on generated arguments for every served tool.
"""

from collections.abc import Callable, Mapping
from typing import Any, cast

Check = Callable[[object], bool]

ANNOTATIONS = frozenset({"title", "description", "default", "examples"})
KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "items",
        "maxItems",
        "maxLength",
        "minLength",
    }
)


class Unsupported(Exception):
    """The schema uses something `compiled` does not check itself."""


def _is_integer(value: object) -> bool:
    # jsonschema's draft 4+ "integer": a bool is not one, a float with no
    # fraction is.
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int)


TYPES: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "number": lambda value: (
        isinstance(value, int | float) and not isinstance(value, bool)
    ),
}


def compiled(schema: Mapping[str, Any]) -> Check | None:
    """A check with `schema`'s verdict, or None if it uses another keyword."""
    try:
        return _schema(schema)
    except Unsupported:
        return None


def _schema(schema: object) -> Check:
    if not isinstance(schema, dict):
        raise Unsupported(schema)
    keywords = cast(dict[str, Any], schema)
    unknown = keywords.keys() - KEYWORDS - ANNOTATIONS
    if unknown:
        raise Unsupported(unknown)
    checks = [
        _keyword(name, value, keywords)
        for name, value in keywords.items()
        if name in KEYWORDS
    ]
    return lambda value: all(check(value) for check in checks)


def _keyword(name: str, value: Any, schema: dict[str, Any]) -> Check:
    if name == "type":
        return _type(value)
    if name == "properties":
        return _properties(value)
    if name == "required":
        return _required(value)
    if name == "additionalProperties":
        return _additional(value, schema.get("properties", {}))
    if name == "anyOf":
        options = [_schema(option) for option in _listed(value)]
        return lambda item: any(option(item) for option in options)
    if name == "items":
        each = _schema(value)
        return lambda item: (
            not isinstance(item, list)
            or all(each(element) for element in cast(list[object], item))
        )
    return _bound(name, _count(value))


def _type(value: object) -> Check:
    names = cast(list[object], value) if isinstance(value, list) else [value]
    if not all(isinstance(name, str) and name in TYPES for name in names):
        raise Unsupported(str(names))
    checks = [TYPES[cast(str, name)] for name in names]
    return lambda item: any(check(item) for check in checks)


def _properties(value: object) -> Check:
    if not isinstance(value, dict):
        raise Unsupported(value)
    checks = {
        str(key): _schema(sub) for key, sub in cast(dict[str, Any], value).items()
    }

    def properties(item: object) -> bool:
        if not isinstance(item, dict):
            return True
        fields = cast(dict[str, Any], item)
        return all(check(fields[key]) for key, check in checks.items() if key in fields)

    return properties


def _required(value: object) -> Check:
    names = _listed(value)
    return lambda item: (
        not isinstance(item, dict) or all(name in item for name in names)
    )


def _additional(value: object, properties: object) -> Check:
    if value is not False or not isinstance(properties, dict):
        raise Unsupported(value)
    known = frozenset(cast(dict[str, Any], properties))
    return lambda item: not isinstance(item, dict) or item.keys() <= known


def _bound(name: str, limit: int) -> Check:
    if name == "maxLength":
        return lambda item: not isinstance(item, str) or len(item) <= limit
    if name == "minLength":
        return lambda item: not isinstance(item, str) or len(item) >= limit
    return lambda item: (
        not isinstance(item, list) or len(cast(list[object], item)) <= limit
    )


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Unsupported(value)
    return value


def _listed(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise Unsupported(value)
    return cast(list[Any], value)
