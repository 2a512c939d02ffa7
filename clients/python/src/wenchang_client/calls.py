"""The API's operations as ``Call``s: one builder per operation, shared by the
synchronous and the asynchronous client (which only send them)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from wenchang_client.models import (
    AuditEvents,
    ChangesPage,
    Deleted,
    FileListing,
    FileVersion,
    MemoryFile,
    MemoryIndex,
    MemoryToolAnswer,
    SearchResults,
    VersionListing,
    Webhook,
    WebhookCreated,
    Webhooks,
)
from wenchang_client.segments import (
    VERSION_RULE,
    invalid_argument,
    is_version,
    require_url_segments,
)
from wenchang_client.wire import Call, path_of, precondition

SEARCH_LIMIT_DEFAULT = 10


@dataclass(frozen=True)
class Expiry:
    """What a whole write says of the file's expiry; by default it keeps it.

    ``expires_at`` "never" clears it; ``ttl_seconds`` counts from the write.
    """

    expires_at: datetime | Literal["never"] | None = None
    ttl_seconds: int | None = None

    def fields(self) -> dict[str, object]:
        given: dict[str, object] = {}
        if self.expires_at == "never":
            given["expires_at"] = None
        elif self.expires_at is not None:
            given["expires_at"] = self.expires_at.isoformat()
        if self.ttl_seconds is not None:
            given["ttl_seconds"] = self.ttl_seconds
        return given


def _given(**values: str | None) -> dict[str, str]:
    return {key: value for key, value in values.items() if value}


def _file(scope: str, area: str, name: str, *tail: str) -> str:
    checked = require_url_segments(scope=scope, area=area, name=name)
    return path_of("files", *checked.values(), *tail)


def _shown(include_expired: bool) -> dict[str, str]:
    return {"include_expired": "true"} if include_expired else {}


def memory_index(etag: str | None, include_expired: bool = False) -> Call[MemoryIndex]:
    headers = {"If-None-Match": etag} if etag else {}
    return Call(
        "GET", path_of("index"), MemoryIndex, _shown(include_expired), headers=headers
    )


def read_file(
    scope: str, area: str, name: str, include_expired: bool = False
) -> Call[MemoryFile]:
    return Call("GET", _file(scope, area, name), MemoryFile, _shown(include_expired))


def list_prefix(
    scope: str, area: str | None, cursor: str | None, include_expired: bool = False
) -> Call[FileListing]:
    checked = require_url_segments(scope=scope, area=area)
    given = _given(cursor=cursor) | _shown(include_expired)
    return Call("GET", path_of("files", *checked.values()), FileListing, given)


def search_memory(
    query: str,
    scope: str | None,
    area: str | None,
    limit: int,
    cursor: str | None,
    include_expired: bool = False,
) -> Call[SearchResults]:
    given = {"q": query, "limit": str(limit)}
    given |= _given(scope=scope, area=area, cursor=cursor) | _shown(include_expired)
    return Call("GET", path_of("search"), SearchResults, given)


def read_changes(scope: str, after: str | None) -> Call[ChangesPage]:
    given = {"scope": scope} | _given(after=after)
    return Call("GET", path_of("changes"), ChangesPage, given)


def add_webhook(scope: str, url: str, description: str) -> Call[WebhookCreated]:
    body = {"url": url, "description": description}
    return Call("POST", path_of("webhooks", scope), WebhookCreated, body=body)


def list_webhooks(scope: str) -> Call[Webhooks]:
    return Call("GET", path_of("webhooks", scope), Webhooks)


def enable_webhook(scope: str, webhook_id: str) -> Call[Webhook]:
    return Call("POST", path_of("webhooks", scope, webhook_id, "enable"), Webhook)


def remove_webhook(scope: str, webhook_id: str) -> Call[Deleted]:
    return Call("DELETE", path_of("webhooks", scope, webhook_id), Deleted)


def read_audit(
    scope: str | None,
    since: datetime | None,
    until: datetime | None,
    operation: str | None,
    area: str | None,
    name: str | None,
    cursor: str | None,
) -> Call[AuditEvents]:
    given = _given(
        scope=scope,
        since=since.isoformat() if since else None,
        until=until.isoformat() if until else None,
        operation=operation,
        area=area,
        name=name,
        cursor=cursor,
    )
    return Call("GET", path_of("audit"), AuditEvents, given)


def _mutation[T: MemoryFile | Deleted](
    method: str,
    path: str,
    result: type[T],
    expected_version: str | None,
    body: Mapping[str, object] | None = None,
) -> Call[T]:
    if expected_version is not None and not is_version(expected_version):
        raise invalid_argument(
            "expected_version", f"{expected_version!r} {VERSION_RULE}"
        )
    return Call(method, path, result, body=body, headers=precondition(expected_version))


def write_file(
    where: tuple[str, str, str],
    content: str,
    description: str,
    aliases: Sequence[str],
    expected_version: str | None,
    expiry: Expiry = Expiry(),
) -> Call[MemoryFile]:
    body: dict[str, object] = {
        "content": content,
        "description": description,
        "aliases": list(aliases),
    }
    body |= expiry.fields()
    return _mutation("PUT", _file(*where), MemoryFile, expected_version, body)


def _optional_list(values: Sequence[str] | None) -> list[str] | None:
    return None if values is None else list(values)


def append_line(
    where: tuple[str, str, str],
    line: str,
    expected_version: str,
    aliases: Sequence[str] | None,
    description: str | None,
) -> Call[MemoryFile]:
    body = {
        "line": line,
        "aliases": _optional_list(aliases),
        "description": description,
    }
    path = _file(*where, "lines")
    return _mutation("POST", path, MemoryFile, expected_version, body)


def replace_fact(
    where: tuple[str, str, str],
    old_string: str,
    new_string: str,
    expected_version: str,
    aliases: Sequence[str] | None,
    description: str | None,
) -> Call[MemoryFile]:
    body = {
        "old_string": old_string,
        "new_string": new_string,
        "aliases": _optional_list(aliases),
        "description": description,
    }
    path = _file(*where, "replace")
    return _mutation("POST", path, MemoryFile, expected_version, body)


def delete_file(where: tuple[str, str, str], expected_version: str) -> Call[Deleted]:
    return _mutation("DELETE", _file(*where), Deleted, expected_version)


def rename_file(
    where: tuple[str, str, str], new_where: tuple[str, str], expected_version: str
) -> Call[MemoryFile]:
    body = {"area": new_where[0], "name": new_where[1]}
    return _mutation(
        "POST", _file(*where, "rename"), MemoryFile, expected_version, body
    )


def list_versions(
    where: tuple[str, str, str], cursor: str | None
) -> Call[VersionListing]:
    path = _file(*where, "versions")
    return Call("GET", path, VersionListing, _given(cursor=cursor))


def read_version(where: tuple[str, str, str], version: str) -> Call[FileVersion]:
    require_url_segments(version=version)
    return Call("GET", _file(*where, "versions", version), FileVersion)


def restore_version(
    where: tuple[str, str, str], version: str, expected_version: str | None
) -> Call[MemoryFile]:
    path = _file(*where, "restore")
    body = {"version": version}
    return _mutation("POST", path, MemoryFile, expected_version, body)


def memory_command(scope: str, command: Mapping[str, object]) -> Call[MemoryToolAnswer]:
    """One command of Claude's memory tool, as Claude sent it."""
    checked = require_url_segments(scope=scope)
    path = path_of("memory-tool", checked["scope"])
    return Call("POST", path, MemoryToolAnswer, body=command)
