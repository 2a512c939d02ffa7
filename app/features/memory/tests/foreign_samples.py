"""The sample inputs of the importers (tests/samples) and requests over them."""

from pathlib import Path

from app.features.memory.schemas import ImportBasicMemory, ImportMcpMemory, ReadFile
from app.features.memory.use_cases.read_file import read_file
from app.server.context import AppContext

SAMPLES = Path(__file__).resolve().parents[4] / "tests" / "samples"
MCP = SAMPLES / "mcp-memory" / "memory.json"
PROJECT = SAMPLES / "basic-memory" / "project"
ENTITY = {"scope": "user", "entity_id": "alice"}


def mcp(path: Path = MCP, **extra: object) -> ImportMcpMemory:
    return ImportMcpMemory.model_validate(ENTITY | {"path": str(path)} | extra)


def basic(path: Path = PROJECT, **extra: object) -> ImportBasicMemory:
    return ImportBasicMemory.model_validate(ENTITY | {"path": str(path)} | extra)


async def read(context: AppContext, area: str, name: str) -> tuple[str, str, list[str]]:
    found = await read_file(ReadFile(scope="user", area=area, name=name), context)
    return found.content, found.description, found.aliases
