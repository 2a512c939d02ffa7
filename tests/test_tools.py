"""The memory tools: manifest, snapshot, and the descriptions MCP serves."""

from typing import Any

import pytest
from tenchi.cli import main
from tenchi.tools import tool_manifest

from app.features.memory.tools import get_memory_index_tool, read_file_tool
from app.server.mcp.settings import MAX_TOOL_DESCRIPTION_CHARS, required_approvals
from app.server.mcp.tools import describe, served_tools
from app.server.settings import Settings, SettingsError
from app.server.tools import tools

SPEC_ORDER = [
    "get_memory_index",
    "read_file",
    "list_prefix",
    "write_file",
    "append_line",
    "replace_fact",
    "delete_file",
    "rename_file",
    "search_memory",
    "list_versions",
    "read_version",
    "restore_version",
]
OPERATIONS = SPEC_ORDER[:8]
READS = {
    "get_memory_index",
    "read_file",
    "list_prefix",
    "search_memory",
    "list_versions",
    "read_version",
}
COMMON = {"UNAUTHORIZED", "BACKEND_UNAVAILABLE"}
MUTATION = COMMON | {
    "INVALID_ARGUMENT",
    "RESTRICTED_SCOPE",
    "MEMORY_NOT_FOUND",
    "VERSION_CONFLICT",
}
ERRORS = {
    # RESTRICTED_SCOPE on reads: include_expired is for owners only.
    "get_memory_index": COMMON | {"RESTRICTED_SCOPE"},
    "read_file": COMMON | {"INVALID_ARGUMENT", "MEMORY_NOT_FOUND", "RESTRICTED_SCOPE"},
    "list_prefix": COMMON | {"INVALID_ARGUMENT", "RESTRICTED_SCOPE"},
    "write_file": MUTATION | {"OVERSIZE_WRITE", "FILE_QUOTA_EXCEEDED"},
    "append_line": MUTATION | {"OVERSIZE_WRITE"},
    "replace_fact": MUTATION | {"OVERSIZE_WRITE", "REPLACE_FACT_MATCH"},
    "delete_file": MUTATION,
    "rename_file": MUTATION,
    "search_memory": COMMON | {"INVALID_ARGUMENT", "RESTRICTED_SCOPE"},
    "list_versions": COMMON | {"INVALID_ARGUMENT", "MEMORY_NOT_FOUND"},
    "read_version": COMMON | {"INVALID_ARGUMENT", "MEMORY_NOT_FOUND"},
    "restore_version": MUTATION | {"OVERSIZE_WRITE", "FILE_QUOTA_EXCEEDED"},
}


def settings(**values: Any) -> Settings:
    return Settings(storage="memory://", **values)


def manifest() -> dict[str, Any]:
    return {entry["name"]: entry for entry in tool_manifest(tools)["tools"]}


def test_tools_snapshot_is_current() -> None:
    """`tools.json` is what `tenchi tools` generates now."""
    assert main(["tools", "--check", "tools.json"]) == 0


def test_tools_are_the_operations_in_spec_order() -> None:
    """The eight operations, bootstrap first, then reads; search right after them."""
    assert [binding.tool.name for binding in tools] == SPEC_ORDER


def test_tools_annotations_match_their_safety() -> None:
    """Reads are read-only; append is additive; other writes are destructive."""
    entries = manifest()

    for name, entry in entries.items():
        annotations = entry["annotations"]
        assert annotations["read_only"] is (name in READS)
        assert annotations["destructive"] is (
            name
            in {
                "write_file",
                "replace_fact",
                "delete_file",
                "rename_file",
                "restore_version",
            }
        )
        assert annotations["idempotent"] is (name in READS)
        assert annotations["open_world"] is False


@pytest.mark.parametrize("name", SPEC_ORDER)
def test_tools_declare_every_error_their_use_case_can_raise(name: str) -> None:
    """Each tool declares the §4 errors its operation raises (and none else)."""
    declared = {error["code"] for error in manifest()[name]["errors"]}

    assert declared == ERRORS[name]


def test_tools_input_schemas_are_the_operation_arguments() -> None:
    """Required arguments and nullability follow docs/concepts.md and docs/mcp.md."""
    entries = manifest()
    required = {
        name: set(entries[name]["input_schema"].get("required", [])) for name in entries
    }
    write = entries["write_file"]["input_schema"]["properties"]
    append = entries["append_line"]["input_schema"]["properties"]

    assert required["get_memory_index"] == set()
    assert required["list_prefix"] == {"scope"}
    assert required["search_memory"] == {"query"}
    assert required["write_file"] == {
        "scope",
        "area",
        "name",
        "content",
        "description",
        "aliases",
        "expected_version",
    }
    assert required["append_line"] == {
        "scope",
        "area",
        "name",
        "line",
        "expected_version",
    }
    assert required["replace_fact"] == {
        "scope",
        "area",
        "name",
        "old_string",
        "new_string",
        "expected_version",
    }
    assert required["delete_file"] == {"scope", "area", "name", "expected_version"}
    assert required["list_versions"] == {"scope", "area", "name"}
    assert required["read_version"] == {"scope", "area", "name", "version"}
    assert required["restore_version"] == {
        "scope",
        "area",
        "name",
        "version",
        "expected_version",
    }
    restore = entries["restore_version"]["input_schema"]["properties"]
    assert {"type": "null"} in restore["expected_version"]["anyOf"]
    assert {"type": "null"} in write["expected_version"]["anyOf"]
    assert append["expected_version"]["type"] == "string"


@pytest.mark.parametrize("name", SPEC_ORDER)
def test_every_tool_argument_tells_the_agent_what_it_is(name: str) -> None:
    """An argument without a description leaves the model guessing (read_file's
    ``name`` once lacked the "without .md" every other file tool states)."""
    properties = manifest()[name]["input_schema"]["properties"]
    undescribed = [
        arg for arg, schema in properties.items() if not schema.get("description")
    ]

    assert undescribed == []


@pytest.mark.parametrize("name", SPEC_ORDER)
def test_tools_descriptions_teach_recovery(name: str) -> None:
    """Each description opens with one sentence naming memory; writes treat
    conflicts as routine."""
    description = manifest()[name]["description"]
    first_line = description.splitlines()[0]
    flat = " ".join(description.split())

    assert first_line.endswith(".") and ". " not in first_line
    assert " memory " in f" {first_line} "
    if name not in READS:
        assert "VersionConflictError is routine" in flat
        assert "retry with its `version`" in flat


def test_describe_names_the_product_in_the_first_line() -> None:
    """With a product, the first line names it; the rest is unchanged."""
    text = describe(read_file_tool, product="Acme", purpose="unused")

    assert text.splitlines()[0] == (
        "Read one Acme memory file: its content, metadata, and version."
    )
    assert text.split("\n", 1)[1] == read_file_tool.description.split("\n", 1)[1]


def test_describe_opens_the_index_with_the_purpose() -> None:
    """The purpose slot is the first paragraph of get_memory_index's description."""
    text = describe(get_memory_index_tool, product=None, purpose="Remember Acme work.")

    assert text.startswith("Remember Acme work.\n\nLoad the index")


def test_served_tools_carry_the_prefix_and_keep_the_order() -> None:
    """With tool_prefix, every tool is `{prefix}_{name}`, still in SPEC order."""
    served = served_tools(settings(tool_prefix="acme"), purpose="p")

    assert [binding.tool.name for binding in served] == [
        f"acme_{name}" for name in SPEC_ORDER
    ]


def test_served_tools_fit_the_description_limit_by_default() -> None:
    """With generic settings every served description is within 2000 characters."""
    served = served_tools(settings(product="Acme Analytics"), purpose="p" * 200)

    assert all(
        len(binding.tool.description) <= MAX_TOOL_DESCRIPTION_CHARS
        for binding in served
    )


def test_served_tools_refuse_a_description_over_the_limit() -> None:
    """A purpose pushing a description past 2000 characters fails, naming the tool."""
    with pytest.raises(SettingsError, match="acme_get_memory_index"):
        served_tools(settings(tool_prefix="acme"), purpose="x" * 2000)


def test_history_tools_can_be_hidden() -> None:
    """WENCHANG_HISTORY_TOOLS=false serves the eight operations and search only."""
    served = served_tools(settings(history_tools=False), purpose="p")

    assert [binding.tool.name for binding in served] == [*OPERATIONS, "search_memory"]


def test_required_approvals_are_registered_names() -> None:
    """`require_approval` lists plain tool names; the gate knows them by prefix."""
    configured = settings(tool_prefix="acme", require_approval="delete_file")

    assert required_approvals(configured) == frozenset({"acme_delete_file"})


def test_required_approvals_reject_unknown_tools() -> None:
    """An unknown name stops startup with the list of valid names."""
    with pytest.raises(SettingsError, match="unknown tools: erase"):
        required_approvals(settings(require_approval="erase"))
