"""Claude's memory tool (``memory_20250818``) kept in Wenchang: backends for the
Anthropic SDK's tool runner.

``WenchangMemoryTool`` (a ``BetaAsyncAbstractMemoryTool``) and
``WenchangMemoryToolSync`` (a ``BetaAbstractMemoryTool``) send each command as
Claude wrote it to ``POST /v1/memory-tool/{scope}``; the server answers with the
texts of the SDK's ``BetaLocalFilesystemMemoryTool``, an error text becoming the
``ToolError`` the runner hands back to Claude. Needs the ``anthropic`` extra.
"""

from collections.abc import Mapping
from typing import Any

import httpx
from anthropic.tools import ToolError
from anthropic.tools.memory import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from pydantic import BaseModel

from wenchang_client.async_client import AsyncMemoryClient
from wenchang_client.models import MemoryToolAnswer
from wenchang_client.retries import RetryPolicy
from wenchang_client.sync_client import MemoryClient

__all__ = ["WenchangMemoryTool", "WenchangMemoryToolSync"]


def _command(command: BaseModel) -> dict[str, Any]:
    return command.model_dump(mode="json", exclude_none=True)


def _text(answer: MemoryToolAnswer) -> str:
    if answer.error is not None:
        raise ToolError(answer.error)
    return answer.result or ""


class WenchangMemoryTool(BetaAsyncAbstractMemoryTool):
    """The memory tool on ``scope`` of the Wenchang at ``base_url``, async."""

    def __init__(
        self,
        base_url: str,
        token: str,
        scope: str,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__()
        self.scope = scope
        self.client = AsyncMemoryClient(
            base_url, token, retry=retry, transport=transport
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def run(self, command: Mapping[str, object]) -> str:
        """One command object as Claude sends it; its result text, or ToolError."""
        return _text(await self.client.run_memory_command(self.scope, command))

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self.run(_command(command))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self.run(_command(command))

    async def str_replace(
        self, command: BetaMemoryTool20250818StrReplaceCommand
    ) -> str:
        return await self.run(_command(command))

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self.run(_command(command))

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self.run(_command(command))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self.run(_command(command))


class WenchangMemoryToolSync(BetaAbstractMemoryTool):
    """The memory tool on ``scope`` of the Wenchang at ``base_url``."""

    def __init__(
        self,
        base_url: str,
        token: str,
        scope: str,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__()
        self.scope = scope
        self.client = MemoryClient(base_url, token, retry=retry, transport=transport)

    def close(self) -> None:
        self.client.close()

    def run(self, command: Mapping[str, object]) -> str:
        """One command object as Claude sends it; its result text, or ToolError."""
        return _text(self.client.run_memory_command(self.scope, command))

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self.run(_command(command))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self.run(_command(command))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self.run(_command(command))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self.run(_command(command))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self.run(_command(command))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self.run(_command(command))
