"""The typed client as a conformance transport: its answers, which are the client
package's own models, read back into the feature's, so the suites compare every
transport's results as equal values."""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

from pydantic import BaseModel
from wenchang_client import AsyncMemoryClient

from app.features.memory.schemas import (
    Deleted,
    FileListing,
    FileVersion,
    MemoryFile,
    MemoryIndex,
    VersionListing,
)


def _as[T: BaseModel](schema: type[T], answer: BaseModel) -> T:
    return schema.model_validate(answer.model_dump())


class ClientTransport:
    """The seven operations (and history) through ``AsyncMemoryClient``."""

    def __init__(self, client: AsyncMemoryClient) -> None:
        self.client = client

    async def get_memory_index(self) -> MemoryIndex:
        return _as(MemoryIndex, await self.client.get_memory_index())

    async def read_file(self, scope: str, area: str, name: str) -> MemoryFile:
        return _as(MemoryFile, await self.client.read_file(scope, area, name))

    async def list_prefix(
        self, scope: str, area: str | None = None, cursor: str | None = None
    ) -> FileListing:
        return _as(FileListing, await self.client.list_prefix(scope, area, cursor))

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
        written = await self.client.write_file(
            scope,
            area,
            name,
            content=content,
            description=description,
            aliases=aliases,
            expected_version=expected_version,
        )
        return _as(MemoryFile, written)

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
        appended = await self.client.append_line(
            scope,
            area,
            name,
            line=line,
            expected_version=expected_version,
            aliases=aliases,
            description=description,
        )
        return _as(MemoryFile, appended)

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
        replaced = await self.client.replace_fact(
            scope,
            area,
            name,
            old_string=old_string,
            new_string=new_string,
            expected_version=expected_version,
            aliases=aliases,
            description=description,
        )
        return _as(MemoryFile, replaced)

    async def delete_file(
        self, scope: str, area: str, name: str, *, expected_version: str
    ) -> Deleted:
        deleted = await self.client.delete_file(
            scope, area, name, expected_version=expected_version
        )
        return _as(Deleted, deleted)

    async def rename_file(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        new_area: str,
        new_name: str,
        expected_version: str,
    ) -> MemoryFile:
        renamed = await self.client.rename_file(
            scope,
            area,
            name,
            new_area=new_area,
            new_name=new_name,
            expected_version=expected_version,
        )
        return _as(MemoryFile, renamed)

    async def list_versions(
        self, scope: str, area: str, name: str, cursor: str | None = None
    ) -> VersionListing:
        listing = await self.client.list_versions(scope, area, name, cursor)
        return _as(VersionListing, listing)

    async def read_version(
        self, scope: str, area: str, name: str, version: str
    ) -> FileVersion:
        record = await self.client.read_version(scope, area, name, version)
        return _as(FileVersion, record)

    async def restore_version(
        self,
        scope: str,
        area: str,
        name: str,
        *,
        version: str,
        expected_version: str | None,
    ) -> MemoryFile:
        restored = await self.client.restore_version(
            scope, area, name, version=version, expected_version=expected_version
        )
        return _as(MemoryFile, restored)


@asynccontextmanager
async def client_transport(
    base_url: str, token: str
) -> AsyncGenerator[ClientTransport]:
    async with AsyncMemoryClient(base_url, token=token) as client:
        yield ClientTransport(client)
