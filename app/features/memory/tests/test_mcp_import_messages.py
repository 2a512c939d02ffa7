"""What a refused memory.json says, line by line, and notes made of relations only."""

import json
from pathlib import Path

import pytest
from tenchi.errors import AppError

from app.features.memory.use_cases.import_mcp_memory import import_mcp_memory
from app.shared.errors import invalid_argument

from .conftest import make_context, snapshot
from .foreign_samples import mcp, read

ADA = '{"type":"entity","name":"Ada","entityType":"person","observations":[]}'
BO = '{"type":"entity","name":"Bo","entityType":"person","observations":["Tea"]}'


def relation(start: object, end: object) -> str:
    line = {"type": "relation", "from": start, "to": end, "relationType": "mentors"}
    return json.dumps(line)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([ADA, ADA], "memory.json line 2: entity 'Ada' is already defined on line 1"),
        (
            [ADA, relation("Cy", "Ada")],
            "memory.json line 2: relation from 'Cy', which no entity line defines",
        ),
        ([ADA, relation(3, "Ada")], "memory.json line 2: 'from' must be a string"),
        ([ADA, relation("Ada", 3)], "memory.json line 2: 'to' must be a string"),
        (["[1]"], "memory.json line 1: is not a JSON object"),
        (['{"type":'], "memory.json line 1: is not JSON (Expecting value, column 9)"),
    ],
)
async def test_a_refused_line_says_what_is_wrong_with_it(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    source = tmp_path / "memory.json"
    source.write_text("\n".join(lines) + "\n")
    context = make_context(surface="task")

    with pytest.raises(AppError) as raised:
        await import_mcp_memory(mcp(source, dry_run=False), context)

    assert raised.value.definition is invalid_argument
    assert raised.value.details["argument"] == "path"
    assert message in raised.value.message
    assert await snapshot(context.storage) == []


async def test_an_entity_with_relations_only_starts_with_them(tmp_path: Path) -> None:
    source = tmp_path / "memory.json"
    source.write_text("\n".join([ADA, BO, relation("Ada", "Bo")]) + "\n")
    context = make_context(surface="task")

    await import_mcp_memory(mcp(source, dry_run=False), context)

    content, _, _ = await read(context, "knowledge", "Ada")
    assert content.startswith("## Relations\n")
