"""The texts the memory tool answers, word for word those of the Anthropic SDK's
reference implementation (``BetaLocalFilesystemMemoryTool``), as pure functions."""

from .paths import ToolRefusal

MAX_LINES = 999999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
DIRECTORY_SIZE = "4K"
"""What the reference shows for a directory on a common Linux filesystem."""


def file_size(size: int) -> str:
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    index = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**index)
    if scaled == int(scaled):
        return f"{int(scaled)}{units[index]}"
    return f"{scaled:.1f}{units[index]}"


def numbered(lines: list[str], start: int) -> list[str]:
    return [
        f"{str(number + start).rjust(LINE_NUMBER_WIDTH)}\t{line}"
        for number, line in enumerate(lines)
    ]


def missing(path: str) -> str:
    return f"The path {path} does not exist. Please provide a valid path."


def directory_view(path: str, items: list[tuple[str, str]]) -> str:
    """A directory's listing; ``items`` are (size, path relative to it)."""
    header = (
        f"Here're the files and directories up to 2 levels deep in {path}, "
        "excluding hidden items:"
    )
    lines = [f"{DIRECTORY_SIZE}\t{path}"]
    lines.extend(f"{size}\t{path}/{relative}" for size, relative in items)
    return f"{header}\n" + "\n".join(lines)


def file_view(path: str, content: str, view_range: list[int] | None) -> str:
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolRefusal(f"File {path} exceeds maximum line limit of 999,999 lines.")
    shown, start = lines, 1
    if view_range and len(view_range) == 2:
        first = max(1, view_range[0]) - 1
        end = len(lines) if view_range[1] == -1 else view_range[1]
        shown, start = lines[first:end], first + 1
    return f"Here's the content of {path} with line numbers:\n" + "\n".join(
        numbered(shown, start)
    )


def no_match(path: str, old: str) -> str:
    return (
        f"No replacement was performed, old_str `{old}` did not appear verbatim "
        f"in {path}."
    )


def several_matches(path: str, old: str, content: str) -> str:
    lines: list[int] = []
    start = 0
    while (position := content.find(old, start)) != -1:
        lines.append(content[:position].count("\n") + 1)
        start = position + 1
    return (
        f"No replacement was performed. Multiple occurrences of old_str `{old}` "
        f"in lines: {', '.join(map(str, lines))}. Please ensure it is unique"
    )


def replaced_snippet(content: str, old: str, new_content: str) -> str:
    changed = content[: content.find(old)].count("\n")
    lines = new_content.split("\n")
    first, end = max(0, changed - 2), min(len(lines), changed + 3)
    snippet = [
        f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{lines[number - 1]}"
        for number in range(first + 1, end + 1)
    ]
    return (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n" + "\n".join(snippet)
    )


def lines_keeping_cr(content: str) -> list[str]:
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def bad_insert_line(insert_line: int, count: int) -> str:
    return (
        f"Invalid `insert_line` parameter: {insert_line}. "
        f"It should be within the range [0, {count}]."
    )


def gone(path: str) -> str:
    return (
        f"The file {path} no longer exists (may have been deleted or renamed "
        "concurrently)."
    )


def read_only(path: str) -> str:
    return (
        f"The path {path} is read-only: files under /memories/system/ are curated "
        "and cannot be changed through the memory tool."
    )
