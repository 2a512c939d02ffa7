"""The memory requests a command makes that need more than its own fields."""

from app.features.memory.schemas import WriteFile


def new_file(scope: str, area: str, name: str, content: str) -> WriteFile:
    """A create-only write (an existing file is a conflict), with no description
    or aliases: the tool's files carry only content."""
    return WriteFile(
        scope=scope,
        area=area,
        name=name,
        content=content,
        description="",
        aliases=[],
        expected_version=None,
    )
