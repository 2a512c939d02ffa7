"""A compiled input check gives jsonschema's verdict on every served tool's schema.

`mcp_input_check.compiled` (fastjsonschema, draft 7) stands in for Tenchi's
`Draft202012Validator` on plain tool calls. For every tool MCP serves,
arguments built near the schema (its own fields with values of every JSON type,
lengths around each limit, missing and extra fields) and arbitrary JSON get the
same verdict from both.
"""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from tenchi.tools import tool_manifest

from app.server.fast.mcp_input_check import compiled
from app.server.mcp.tools import served_tools
from app.server.settings import Settings
from tests.http_support import open_api

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 10.0, -3.0, 2.5]),
    st.text(max_size=8),
    st.sampled_from(["a" * 255, "a" * 256, "a" * 257, "é" * 256, "x" * 513]),
)
JSON_OR_SSE = "application/json, text/event-stream"
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
    ),
    max_leaves=12,
)


def input_schemas() -> dict[str, dict[str, Any]]:
    """Each served tool's input schema, as the direct path reads it (its manifest)."""
    tools = served_tools(Settings(storage="memory://"), purpose="Remember.")
    return {
        entry["name"]: entry["input_schema"] for entry in tool_manifest(tools)["tools"]
    }


SCHEMAS = input_schemas()


def values(schema: dict[str, Any]) -> st.SearchStrategy[object]:
    """Values around `schema`: mostly valid, each limit met and passed by one,
    a wrong type now and then."""
    if "anyOf" in schema:
        return st.one_of(*(values(option) for option in schema["anyOf"]))
    kind = schema.get("type")
    if kind == "object":
        return objects(schema)
    if kind == "string":
        limit = schema.get("maxLength", 8)
        lengths = [0, 1, limit - 1, limit, limit + 1]
        return st.one_of(
            st.text(max_size=4),
            st.sampled_from([c * n for n in lengths if n >= 0 for c in "aé"]),
        )
    if kind == "array":
        item = values(schema.get("items", {}))
        most = schema.get("maxItems", 3)
        return st.one_of(
            st.lists(item, max_size=3),
            st.builds(repeated, item, st.sampled_from([most, most + 1])),
        )
    if kind == "integer":
        return st.one_of(st.integers(), st.sampled_from([1.0, 2.5, True, -0.0]))
    return SCALARS


def repeated(value: object, times: int) -> list[object]:
    return [value] * times


def objects(schema: dict[str, Any]) -> st.SearchStrategy[object]:
    """Objects of all the schema's fields, one of them sometimes dropped,
    replaced by any JSON value, or joined by a field the schema does not name."""
    properties: dict[str, Any] = schema.get("properties", {})
    kept = st.fixed_dictionaries(
        {name: values(sub) for name, sub in properties.items()}
    )
    names = st.sampled_from([*sorted(properties), "x", "input"])
    change = st.one_of(
        st.none(),
        st.tuples(names, st.none()),
        st.tuples(names, JSON),
    )
    return st.builds(changed, kept, change)


def changed(fields: dict[str, Any], change: tuple[str, Any] | None) -> object:
    if change is None:
        return fields
    name, value = change
    if value is None:
        return {k: v for k, v in fields.items() if k != name}
    return {**fields, name: value}


def near(schema: dict[str, Any]) -> st.SearchStrategy[object]:
    """Arguments around the schema, and arbitrary JSON."""
    return st.one_of(values(schema), JSON)


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
def test_every_served_schema_compiles(tool: str) -> None:
    assert compiled(SCHEMAS[tool]) is not None


async def test_the_manifests_schemas_are_what_tools_list_publishes(
    tmp_path: Path,
) -> None:
    """The direct path checks arguments against the schema callers are shown."""
    async with open_api(tmp_path) as api:
        headers = api.alice | {"accept": JSON_OR_SSE, "host": "127.0.0.1:8000"}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        listed = await api.http.post("/mcp", json=message, headers=headers)

    published = {
        tool["name"]: tool["inputSchema"] for tool in listed.json()["result"]["tools"]
    }
    assert published == SCHEMAS


STRATEGIES = {tool: near(schema) for tool, schema in SCHEMAS.items()}
VALIDATORS: dict[str, Any] = {
    tool: Draft202012Validator(schema, format_checker=FormatChecker())
    for tool, schema in SCHEMAS.items()
}


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_the_compiled_check_gives_jsonschemas_verdict(
    tool: str, data: st.DataObject
) -> None:
    check = compiled(SCHEMAS[tool])
    assert check is not None
    arguments = data.draw(STRATEGIES[tool])
    verdict = bool(VALIDATORS[tool].is_valid(arguments))
    assert check(arguments) == verdict, arguments


def test_a_schema_that_does_not_compile_keeps_jsonschema() -> None:
    assert compiled({"type": "decimal"}) is None
    assert compiled({"$ref": "#/nowhere"}) is None


def test_the_check_never_fills_in_defaults() -> None:
    """Arguments reach the tool as sent: a default is the tool's to apply."""
    check = compiled({"type": "object", "properties": {"a": {"default": 1}}})
    arguments: dict[str, Any] = {}
    assert check is not None and check(arguments) is True
    assert arguments == {}
