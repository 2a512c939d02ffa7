"""Every memory tool and every error path, as an agent meets them over MCP.

Each check drives one tool through a live `mcp.client.Client` session, so the
same checks run over streamable HTTP and over stdio. They expect a server with
the grants of `mcp_support.GRANTS` and the limits of `mcp_support.LIMITS`, and
keep to their own area so they can share one server.
"""

from typing import Any

from mcp.client import Client
from mcp.types import CallToolResult

from tests.mcp_support import FILE_CAP, envelope, failed, ok, refused, texts

TEA = "- [stated] Prefers green tea\n"


async def call(session: Client, tool: str, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments)


async def create(
    session: Client, area: str, name: str, content: str = TEA, *, scope: str = "user"
) -> dict[str, Any]:
    written = await call(
        session,
        "write_file",
        scope=scope,
        area=area,
        name=name,
        content=content,
        description=f"About {name}",
        aliases=[],
        expected_version=None,
    )
    return ok(written)


def located(details: dict[str, Any], area: str, name: str) -> None:
    assert (details["scope"], details["area"], details["name"]) == ("user", area, name)


async def check_get_memory_index(session: Client, area: str) -> None:
    """The index lists what was written, complete, with the prompt as a 2nd block."""
    await create(session, area, "diet")

    result = await call(session, "get_memory_index")

    index = ok(result)
    assert index["capped"] == []
    entry = next(
        e for e in index["entries"] if (e["area"], e["name"]) == (area, "diet")
    )
    assert "content" not in entry
    assert entry["description"] == "About diet"
    first, prompt = texts(result)
    assert '"ok":true' in first
    assert prompt == session.instructions
    assert prompt.startswith("## Memory\n\n")


async def check_read_file(session: Client, area: str) -> None:
    """read_file returns the file; absent files and bad arguments are recoverable."""
    created = await create(session, area, "tea")

    assert ok(
        await call(session, "read_file", scope="user", area=area, name="tea")
    ) == (created)
    absent = failed(
        await call(session, "read_file", scope="user", area=area, name="coffee"),
        "MEMORY_NOT_FOUND",
    )
    assert (absent["error"], absent["category"]) == ("NotFoundError", "recoverable")
    assert absent["reason"] == "file_absent"
    located(absent, area, "coffee")
    scope = failed(
        await call(session, "read_file", scope="nowhere", area=area, name="tea"),
        "INVALID_ARGUMENT",
    )
    assert scope["argument"] == "scope"
    assert "available scopes: quota, team, user" in scope["message"]
    slug = failed(
        await call(session, "read_file", scope="user", area="Notes", name="tea"),
        "INVALID_ARGUMENT",
    )
    assert slug["argument"] == "area"
    name = failed(
        await call(session, "read_file", scope="user", area=area, name="t\u200bea"),
        "INVALID_ARGUMENT",
    )
    assert name["argument"] == "name"
    curated = await call(session, "read_file", scope="user", area="system", name="x")
    assert failed(curated, "MEMORY_NOT_FOUND")["reason"] == "file_absent"
    missing = await call(session, "read_file", scope="user", area=area)
    refused(missing, "invalid_input")


async def check_list_prefix(session: Client, area: str) -> None:
    """list_prefix pages with an opaque cursor bound to its listing."""
    for name in ("a", "b", "c"):
        await create(session, area, name)

    first = ok(await call(session, "list_prefix", scope="user", area=area))
    second = ok(
        await call(
            session, "list_prefix", scope="user", area=area, cursor=first["next_cursor"]
        )
    )

    assert [e["name"] for e in first["entries"] + second["entries"]] == ["a", "b", "c"]
    assert second["next_cursor"] is None
    assert all("content" not in entry for entry in first["entries"])
    foreign = await call(
        session, "list_prefix", scope="user", cursor=first["next_cursor"]
    )
    assert failed(foreign, "INVALID_ARGUMENT")["argument"] == "cursor"
    garbled = await call(session, "list_prefix", scope="user", area=area, cursor="x")
    assert failed(garbled, "INVALID_ARGUMENT")["argument"] == "cursor"
    slug = await call(session, "list_prefix", scope="user", area="No Slug")
    assert failed(slug, "INVALID_ARGUMENT")["argument"] == "area"
    whole = ok(await call(session, "list_prefix", scope="user"))
    assert whole["entries"]


async def check_write_file(session: Client, area: str, source: str) -> None:
    """write_file creates and replaces; each refusal carries what fixes it."""
    created = await create(session, area, "tools")
    assert created["sources"] == [source]

    duplicate = failed(
        await call(
            session,
            "write_file",
            scope="user",
            area=area,
            name="tools",
            content="- [stated] Uses vim\n",
            description="d",
            aliases=[],
            expected_version=None,
        ),
        "VERSION_CONFLICT",
    )

    assert (duplicate["error"], duplicate["category"]) == (
        "VersionConflictError",
        "recoverable",
    )
    assert (duplicate["content"], duplicate["version"]) == (TEA, created["version"])
    located(duplicate, area, "tools")
    replaced = ok(await write(session, area, "tools", created["version"], ["editor"]))
    assert (replaced["aliases"], replaced["description"]) == (["editor"], "new")
    stale = failed(
        await write(session, area, "tools", created["version"]), "VERSION_CONFLICT"
    )
    assert stale["version"] == replaced["version"]
    absent = failed(await write(session, area, "gone", "1"), "MEMORY_NOT_FOUND")
    assert absent["reason"] == "file_absent"
    await check_write_refusals(session, area)


async def write(
    session: Client,
    area: str,
    name: str,
    version: str | None,
    aliases: list[str] | None = None,
    *,
    scope: str = "user",
    content: str = "- [stated] Uses vim\n",
    description: str = "new",
) -> CallToolResult:
    return await call(
        session,
        "write_file",
        scope=scope,
        area=area,
        name=name,
        content=content,
        description=description,
        aliases=aliases or [],
        expected_version=version,
    )


async def check_write_refusals(session: Client, area: str) -> None:
    big = "- [stated] " + "x" * 300 + "\n"
    oversize = failed(
        await write(session, area, "big", None, content=big), "OVERSIZE_WRITE"
    )
    assert (oversize["size"], oversize["limit"]) == (len(big), 256)
    curated = failed(await write(session, "system", "x", None), "RESTRICTED_SCOPE")
    assert (curated["category"], curated["reason"]) == ("permanent", "system_read_only")
    gated = failed(
        await write(session, area, "x", None, scope="team"), "RESTRICTED_SCOPE"
    )
    assert (gated["reason"], gated["required_roles"]) == ("role_required", ["admin"])
    two_lines = await write(session, area, "x", None, description="one\ntwo")
    assert failed(two_lines, "INVALID_ARGUMENT")["argument"] == "description"
    untyped = await call(session, "write_file", scope="user", area=area, name="x")
    refused(untyped, "invalid_input")


async def check_file_quota(session: Client) -> None:
    """Creating a file past the per-entity cap is refused with the limit."""
    for number in range(FILE_CAP):
        await create(session, "quota-files", f"f{number}", scope="quota")

    result = await write(session, "quota-files", "one-more", None, scope="quota")

    assert failed(result, "FILE_QUOTA_EXCEEDED")["limit"] == FILE_CAP


async def append(
    session: Client, area: str, name: str, line: str, version: str | None, **more: Any
) -> CallToolResult:
    return await call(
        session,
        "append_line",
        scope="user",
        area=area,
        name=name,
        line=line,
        expected_version=version,
        **more,
    )


async def check_append_line(session: Client, area: str) -> None:
    """append_line adds one fact line and merges aliases; refusals are specific."""
    created = await create(session, area, "habits")

    added = ok(
        await append(
            session,
            area,
            "habits",
            "- [observed] Works late",
            created["version"],
            aliases=["routine"],
            description="Habits",
        )
    )

    assert added["content"] == TEA + "- [observed] Works late\n"
    assert (added["aliases"], added["description"]) == (["routine"], "Habits")
    line = failed(
        await append(session, area, "habits", "late", added["version"]),
        "INVALID_ARGUMENT",
    )
    assert line["argument"] == "line"
    stale = failed(
        await append(session, area, "habits", "- [stated] x", "0"), "VERSION_CONFLICT"
    )
    assert (stale["content"], stale["version"]) == (added["content"], added["version"])
    absent = await append(session, area, "nothing", "- [stated] x", "1")
    assert failed(absent, "MEMORY_NOT_FOUND")["reason"] == "file_absent"
    long = "- [stated] " + "y" * 250
    oversize = failed(
        await append(session, area, "habits", long, added["version"]), "OVERSIZE_WRITE"
    )
    assert oversize["limit"] == 256
    curated = await append(session, "system", "habits", "- [stated] x", "1")
    assert failed(curated, "RESTRICTED_SCOPE")["reason"] == "system_read_only"
    refused(
        await append(session, area, "habits", "- [stated] x", None), "invalid_input"
    )


async def replace(
    session: Client, area: str, name: str, old: str, new: str, version: str
) -> CallToolResult:
    return await call(
        session,
        "replace_fact",
        scope="user",
        area=area,
        name=name,
        old_string=old,
        new_string=new,
        expected_version=version,
    )


async def check_replace_fact(session: Client, area: str) -> None:
    """replace_fact edits one unique span; 0 or 2 matches return the content."""
    body = "- [stated] Likes tea\n- [stated] Uses vim\n- [stated] Uses vim daily\n"
    created = await create(session, area, "prefs", body)

    edited = ok(
        await replace(
            session, area, "prefs", "Likes tea", "Likes oolong", created["version"]
        )
    )

    assert edited["content"].startswith("- [stated] Likes oolong\n")
    version = edited["version"]
    none = failed(
        await replace(session, area, "prefs", "coffee", "x", version),
        "REPLACE_FACT_MATCH",
    )
    assert (none["match_count"], none["version"]) == (0, version)
    assert none["content"] == edited["content"]
    two = failed(
        await replace(session, area, "prefs", "Uses vim", "x", version),
        "REPLACE_FACT_MATCH",
    )
    assert two["match_count"] == 2
    empty = failed(
        await replace(session, area, "prefs", "", "x", version), "INVALID_ARGUMENT"
    )
    assert empty["argument"] == "old_string"
    stale = failed(
        await replace(session, area, "prefs", "Uses vim", "x", "0"), "VERSION_CONFLICT"
    )
    assert stale["version"] == version
    forgiven = ok(
        await replace(session, area, "prefs", "oolong", "sencha", created["version"])
    )
    assert "Likes sencha" in forgiven["content"]
    huge = failed(
        await replace(session, area, "prefs", "sencha", "z" * 300, forgiven["version"]),
        "OVERSIZE_WRITE",
    )
    assert huge["limit"] == 256
    absent = await replace(session, area, "nothing", "a", "b", "1")
    assert failed(absent, "MEMORY_NOT_FOUND")["reason"] == "file_absent"
    curated = await replace(session, "system", "prefs", "a", "b", "1")
    assert failed(curated, "RESTRICTED_SCOPE")["reason"] == "system_read_only"


async def delete(session: Client, area: str, name: str, version: str) -> CallToolResult:
    return await call(
        session,
        "delete_file",
        scope="user",
        area=area,
        name=name,
        expected_version=version,
    )


async def check_delete_file(session: Client, area: str) -> None:
    """delete_file is version-guarded; a second delete finds nothing."""
    created = await create(session, area, "old")

    stale = failed(await delete(session, area, "old", "0"), "VERSION_CONFLICT")
    deleted = ok(await delete(session, area, "old", created["version"]))
    again = failed(
        await delete(session, area, "old", created["version"]), "MEMORY_NOT_FOUND"
    )

    assert (stale["content"], stale["version"]) == (TEA, created["version"])
    assert deleted == {"ok": True}
    assert again["reason"] == "file_absent"
    curated = await delete(session, "system", "old", "1")
    assert failed(curated, "RESTRICTED_SCOPE")["reason"] == "system_read_only"
    assert (
        failed(await delete(session, "Bad", "old", "1"), "INVALID_ARGUMENT")["argument"]
        == "area"
    )


async def check_unknown_tool(session: Client) -> None:
    """An unknown tool is an error result, not a crash."""
    result = await call(session, "erase_everything")

    assert result.is_error is True
    assert result.structured_content is None


async def scripted_agent_session(session: Client, area: str) -> None:
    """index -> create -> append -> conflicting append -> merge and retry ->
    replace -> list -> delete, as an agent following the descriptions would."""
    ok(await call(session, "get_memory_index"))
    created = await create(session, area, "coffee", "- [stated] Drinks espresso\n")
    mine = ok(
        await append(
            session, area, "coffee", "- [observed] Orders oat milk", created["version"]
        )
    )
    other = ok(
        await append(session, area, "coffee", "- [stated] No sugar", mine["version"])
    )

    conflict = failed(
        await append(
            session, area, "coffee", "- [inferred] Likes it strong", mine["version"]
        ),
        "VERSION_CONFLICT",
    )
    assert conflict["category"] == "recoverable"
    assert conflict["content"] == other["content"]
    assert "Likes it strong" not in conflict["content"]
    merged = ok(
        await append(
            session, area, "coffee", "- [inferred] Likes it strong", conflict["version"]
        )
    )
    assert merged["content"] == (
        "- [stated] Drinks espresso\n- [observed] Orders oat milk\n"
        "- [stated] No sugar\n- [inferred] Likes it strong\n"
    )
    replaced = ok(
        await replace(
            session, area, "coffee", "oat milk", "whole milk", merged["version"]
        )
    )
    listing = ok(await call(session, "list_prefix", scope="user", area=area))
    assert [(e["name"], e["version"]) for e in listing["entries"]] == [
        ("coffee", replaced["version"])
    ]
    assert ok(await delete(session, area, "coffee", replaced["version"])) == {
        "ok": True
    }
    index = ok(await call(session, "get_memory_index"))
    assert all(entry["area"] != area for entry in index["entries"])
    assert (
        envelope(
            await call(session, "read_file", scope="user", area=area, name="coffee")
        )["ok"]
        is False
    )
