"""Requests the write, append and replace use-case tests build."""

from app.features.memory.schemas import AppendLine, ReplaceFact, WriteFile


def write_request(
    content: str = "- [stated] Likes tea.\n",
    expected_version: str | None = None,
    *,
    scope: str = "user",
    area: str = "notes",
    name: str = "tea",
    description: str = "Drinks",
    aliases: list[str] | None = None,
) -> WriteFile:
    return WriteFile(
        scope=scope,
        area=area,
        name=name,
        content=content,
        description=description,
        aliases=aliases if aliases is not None else ["cha"],
        expected_version=expected_version,
    )


LINE = "- [stated] Prefers green tea."


def append_request(
    expected_version: str,
    line: str = LINE,
    *,
    area: str = "notes",
    aliases: list[str] | None = None,
    description: str | None = None,
) -> AppendLine:
    return AppendLine(
        scope="user",
        area=area,
        name="tea",
        line=line,
        expected_version=expected_version,
        aliases=aliases,
        description=description,
    )


FACTS = "# Tea\n- [stated] Likes green tea.\n- [stated] Dislikes coffee.\n"


def replace_request(
    expected_version: str,
    old_string: str = "green",
    new_string: str = "oolong",
    *,
    area: str = "notes",
    aliases: list[str] | None = None,
    description: str | None = None,
) -> ReplaceFact:
    return ReplaceFact(
        scope="user",
        area=area,
        name="tea",
        old_string=old_string,
        new_string=new_string,
        expected_version=expected_version,
        aliases=aliases,
        description=description,
    )
