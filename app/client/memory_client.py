"""Typed Python client of the memory API: one method per memory operation.

``MemoryClient`` sends each call through ``ContractCalls`` (``_read``,
``_mutate``; ``app.client.calls``) with the precondition its
``expected_version`` asks for. Methods return the feature's models and raise
the exceptions of ``app.client.errors``. Open one with
``app.client.open_memory_client``.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import cast

from tenchi.client import Client
from tenchi.retries import RetryPolicy

from app.client.calls import ContractCalls
from app.client.translate import translate_errors
from app.features.audit.contracts import read_audit_contract
from app.features.audit.schemas import AuditEvents
from app.features.memory import contracts
from app.features.memory.schemas import (
    Deleted,
    FileListing,
    FileVersion,
    IndexConditionHeaders,
    MemoryFile,
    MemoryIndex,
    VersionListing,
)
from app.features.search.contracts import search_memory_contract
from app.features.search.schemas import SEARCH_LIMIT_DEFAULT, SearchResults

__all__ = ["MemoryClient"]


class MemoryClient(ContractCalls):
    """The seven memory operations over HTTP, typed end to end.

    Every method raises a ``WenchangError`` subclass, never a transport error.
    """

    def __init__(self, client: Client, *, retry: RetryPolicy | None = None) -> None:
        super().__init__(client, retry=retry)
        # The last index and its ETag; a copy, so a caller editing the model it
        # was given cannot change what a later 304 returns.
        self._index: tuple[str, MemoryIndex] | None = None

    async def get_memory_index(self) -> MemoryIndex:
        """The caller's index, revalidated: unchanged, it costs a 304 and no body."""
        held = self._index
        headers = IndexConditionHeaders(if_none_match=held[0] if held else None)
        with translate_errors():
            answer = await self._client.call_with_response(
                contracts.get_memory_index_contract, headers=headers, retry=self._retry
            )
        if answer.body is None and held is not None:
            return held[1].model_copy(deep=True)
        index = cast(MemoryIndex, answer.body)
        self._index = (answer.headers.etag, index.model_copy(deep=True))
        return index

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile:
        return await self._read(
            contracts.read_file_contract, scope=scope, area=area, name=name
        )

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing:
        query = {"cursor": cursor} if cursor else {}
        contract = (
            contracts.list_scope_contract
            if area is None
            else contracts.list_area_contract
        )
        return await self._read(contract, query, scope=scope, area=area)

    async def search_memory(
        self,
        query: str,
        *,
        scope: str | None = None,
        area: str | None = None,
        limit: int = SEARCH_LIMIT_DEFAULT,
        cursor: str | None = None,
    ) -> SearchResults:
        """Files of the caller's scopes holding every word of ``query``, best first."""
        given = {"scope": scope, "area": area, "cursor": cursor}
        query_string = {"q": query, "limit": str(limit)}
        query_string |= {key: value for key, value in given.items() if value}
        return await self._read(search_memory_contract, query_string)

    async def read_audit(
        self,
        scope: str | None = None,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        operation: str | None = None,
        area: str | None = None,
        name: str | None = None,
        cursor: str | None = None,
    ) -> AuditEvents:
        """One page of audit events on the caller's memory, newest first."""
        given = {
            "scope": scope,
            "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None,
            "operation": operation,
            "area": area,
            "name": name,
            "cursor": cursor,
        }
        query = {key: value for key, value in given.items() if value}
        return await self._read(read_audit_contract, query)

    async def write_file(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        content: str,
        description: str,
        aliases: Sequence[str],
        expected_version: str | None,
    ) -> MemoryFile:
        body = {"content": content, "description": description, "aliases": aliases}
        return await self._mutate(
            contracts.write_file_contract,
            (scope, area, name),
            expected_version,
            body,
        )

    async def append_line(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        line: str,
        expected_version: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> MemoryFile:
        body = {"line": line, "aliases": aliases, "description": description}
        return await self._mutate(
            contracts.append_line_contract,
            (scope, area, name),
            expected_version,
            body,
        )

    async def replace_fact(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        old_string: str,
        new_string: str,
        expected_version: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> MemoryFile:
        body = {
            "old_string": old_string,
            "new_string": new_string,
            "aliases": aliases,
            "description": description,
        }
        return await self._mutate(
            contracts.replace_fact_contract,
            (scope, area, name),
            expected_version,
            body,
        )

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        await self._mutate(
            contracts.delete_file_contract,
            (scope, area, name),
            expected_version,
        )
        return Deleted()

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing:
        """One page of the file's version records, newest first."""
        query = {"cursor": cursor} if cursor else {}
        return await self._read(
            contracts.list_versions_contract, query, scope=scope, area=area, name=name
        )

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion:
        """One version record with the file as it stood."""
        return await self._read(
            contracts.read_version_contract,
            scope=scope,
            area=area,
            name=name,
            version=version,
        )

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile:
        """Write ``version`` again as a new version; None re-creates a deleted file."""
        return await self._mutate(
            contracts.restore_version_contract,
            (scope, area, name),
            expected_version,
            {"version": version},
        )
