"""Claude's memory tool kept in Wenchang: the same command sequences through the
Anthropic SDK's reference tool (``BetaLocalFilesystemMemoryTool``) and through
``WenchangMemoryToolSync`` against a real server give the same texts, word for
word; what only Wenchang refuses says which path would work; concurrent edits
never lose an update. Runs on the backend the test run selects."""

import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.tools import ToolError
from anthropic.tools.memory import BetaAbstractMemoryTool, BetaLocalFilesystemMemoryTool
from wenchang_client.memory_tool import WenchangMemoryToolSync

from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import Grant, Identity
from tests.support.storage_adapters import storage_url_for_tests
from tests.support.transports import TokenRegistry, serve_in_thread

type Outcome = tuple[str, str]


class Server:
    def __init__(self, url: str, tokens: TokenRegistry) -> None:
        self.url = url
        self.tokens = tokens

    def token(self) -> str:
        """A token on scope ``user`` of a fresh entity."""
        grants = {"user": Grant(f"e-{uuid.uuid4().hex[:12]}", "owner")}
        return self.tokens.issue(Identity(grants=grants, label="memory-tool"))

    def tool(self, token: str | None = None) -> WenchangMemoryToolSync:
        return WenchangMemoryToolSync(self.url, token or self.token(), "user")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("memory-tool")
    settings = Settings(
        storage=storage_url_for_tests(root),
        tokens_file=str(root / "tokens.json"),
        cursor_secret="memory-tool-tests-secret",
    )
    tokens = TokenRegistry()
    with serve_in_thread(build_app(settings, resolver=tokens)) as url:
        yield Server(url, tokens)


@pytest.fixture
def ours(server: Server) -> Iterator[WenchangMemoryToolSync]:
    tool = server.tool()
    yield tool
    tool.close()


def run(tool: BetaAbstractMemoryTool, command: dict[str, Any]) -> Outcome:
    """What the SDK's tool runner hands Claude: the text, or the error's text."""
    try:
        return ("result", str(tool.call(command)))
    except ToolError as error:
        return ("error", str(error))


DIRECTORY_LINE = re.compile(r"^\S+\t(/memories\S*/)$", re.MULTILINE)


def comparable(outcome: Outcome) -> Outcome:
    """A directory's size is the filesystem's (4K on ext4, other values on
    tmpfs); Wenchang always shows 4K. Everything else is compared as is."""
    kind, text = outcome
    if text.startswith("Here're the files"):
        header, viewed, *items = text.split("\n")
        viewed = "DIR\t" + viewed.split("\t", 1)[1]
        text = "\n".join([header, viewed, *items])
    return kind, DIRECTORY_LINE.sub(lambda m: f"DIR\t{m.group(1)}", text)


def view(path: str, view_range: list[int] | None = None) -> dict[str, Any]:
    command: dict[str, Any] = {"command": "view", "path": path}
    return command | ({"view_range": view_range} if view_range else {})


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: int, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


COFFEE = "/memories/prefs/coffee.md"
NOTES = "/memories/notes.md"
SEQUENCES: dict[str, list[dict[str, Any]]] = {
    "files at depth one and two": [
        view("/memories"),
        create(NOTES, "hello\nworld\n"),
        create(COFFEE, "- black\n- no sugar\n"),
        create("/memories/prefs/tea.md", ""),
        create(COFFEE, "again"),
        view("/memories"),
        view("/memories/"),
        view("/memories/prefs"),
        view(COFFEE),
        view(COFFEE, [2, -1]),
        view(COFFEE, [1, 1]),
        view(NOTES),
        view("/memories/missing.md"),
        view("/memories/prefs/missing.md"),
        view("/memories/nothing"),
    ],
    "str_replace": [
        create(COFFEE, "one\ntwo\nthree\nfour\nfive\nsix\n"),
        replace(COFFEE, "four", "FOUR"),
        replace(COFFEE, "absent", "x"),
        replace(COFFEE, "o", "0"),
        replace(COFFEE, "aa", "b"),
        replace(COFFEE, "one\n", ""),
        replace("/memories/prefs/missing.md", "a", "b"),
        replace("/memories/prefs", "a", "b"),
        replace("/memories", "a", "b"),
        view(COFFEE),
    ],
    "str_replace counts non-overlapping matches": [
        create(NOTES, "aaa\n"),
        replace(NOTES, "aa", "b"),
        view(NOTES),
    ],
    "insert": [
        create(NOTES, "a\nb\n"),
        insert(NOTES, 0, "top"),
        insert(NOTES, 3, "end\n"),
        insert(NOTES, 2, "mid\r"),
        insert(NOTES, 9, "x"),
        insert(NOTES, -1, "x"),
        create("/memories/prefs/empty.md", ""),
        insert("/memories/prefs/empty.md", 0, "first"),
        create("/memories/prefs/open.md", "no newline"),
        insert("/memories/prefs/open.md", 1, "second"),
        insert("/memories/gone.md", 0, "x"),
        insert("/memories/prefs", 0, "x"),
        view(NOTES),
        view("/memories/prefs/empty.md"),
        view("/memories/prefs/open.md"),
    ],
    "delete files and directories": [
        create(NOTES, "x"),
        create(COFFEE, "y"),
        create("/memories/prefs/tea.md", "z"),
        create("/memories/other/a.md", "w"),
        delete(NOTES),
        delete(NOTES),
        view(NOTES),
        delete("/memories/prefs"),
        view("/memories/prefs"),
        view(COFFEE),
        delete("/memories"),
        delete("/memories/nothing"),
        view("/memories"),
    ],
    "paths": [
        view("/other"),
        create("/elsewhere/x.md", "x"),
        view("/memories/../x"),
        view("/memories/prefs/../.."),
        create("/memories/prefs/./a.md", "dot"),
        view("/memories/prefs/a.md"),
        create("/memories/.hidden", "h"),
        view("/memories"),
    ],
    "rename's checks": [
        create(NOTES, "x"),
        create(COFFEE, "y"),
        rename("/memories", "/memories/x"),
        rename(NOTES, COFFEE),
        rename(NOTES, "/memories/prefs"),
        rename("/memories/missing.md", "/memories/new.md"),
        rename("/other", NOTES),
    ],
    "rename": [
        create(COFFEE, "- black\n"),
        create("/memories/prefs/tea.md", "- green\n"),
        create("/memories/drinks/milk.md", "- oat\n"),
        rename(COFFEE, "/memories/drinks/coffee.md"),
        view("/memories"),
        view("/memories/drinks/coffee.md"),
        view(COFFEE),
        rename("/memories/drinks/coffee.md", "/memories/coffee.md"),
        rename("/memories/prefs", "/memories/hot"),
        view("/memories"),
        view("/memories/hot/tea.md"),
        rename("/memories/hot/tea.md", "/memories/coffee.md"),
        rename("/memories/hot", "/memories/coffee.md"),
        replace("/memories/coffee.md", "black", "white"),
        view("/memories/coffee.md"),
    ],
}


@pytest.mark.parametrize("sequence", list(SEQUENCES))
def test_a_sequence_answers_as_the_reference_does(
    sequence: str, ours: WenchangMemoryToolSync, tmp_path: Path
) -> None:
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))

    for command in SEQUENCES[sequence]:
        expected = comparable(run(reference, command))

        assert comparable(run(ours, command)) == expected, command


def test_a_file_at_depth_one_is_a_file_of_the_reserved_area(
    ours: WenchangMemoryToolSync,
) -> None:
    run(ours, create(NOTES, "- [stated] kept\n"))

    listing = ours.client.list_prefix("user")

    assert [(e.area, e.name) for e in listing.entries] == [
        ("memories-root", "notes.md")
    ]
    assert run(ours, view("/memories/memories-root/notes.md"))[0] == "error"


def test_what_cannot_be_represented_says_which_path_would(
    ours: WenchangMemoryToolSync,
) -> None:
    deep = run(ours, create("/memories/a/b/c.md", "x"))
    spaced = run(ours, create("/memories/My Notes/x.md", "x"))
    reserved = run(ours, view("/memories/memories-root"))
    long = run(ours, create("/memories/notes/" + "n" * 300, "x"))

    assert deep[0] == "error" and "/memories/a/b-c.md" in deep[1]
    assert spaced[0] == "error" and "/memories/my-notes/x.md" in spaced[1]
    assert reserved[0] == "error" and "/memories/<file>" in reserved[1]
    assert long[0] == "error" and "longer than 256 characters" in long[1]


def test_system_files_are_read_only(ours: WenchangMemoryToolSync) -> None:
    refused = run(ours, create("/memories/system/rules.md", "x"))

    assert refused[0] == "error" and "read-only" in refused[1]


def test_a_renamed_file_keeps_its_history(ours: WenchangMemoryToolSync) -> None:
    run(ours, create(NOTES, "x"))

    renamed = run(ours, rename(NOTES, "/memories/prefs/moved.md"))

    assert renamed == (
        "result",
        "Successfully renamed /memories/notes.md to /memories/prefs/moved.md",
    )
    versions = ours.client.list_versions("user", "prefs", "moved.md")
    assert [e.operation for e in versions.entries] == ["rename_file", "write_file"]


def test_a_directory_moves_only_to_another_area(ours: WenchangMemoryToolSync) -> None:
    run(ours, create(COFFEE, "y"))

    refused = run(ours, rename("/memories/prefs", "/memories/drinks/prefs"))

    assert refused[0] == "error" and "Nothing was renamed" in refused[1]
    assert run(ours, view(COFFEE))[0] == "result"


def test_concurrent_agents_never_lose_an_edit(server: Server) -> None:
    """Two agents insert into one file at once: every line lands."""
    token = server.token()
    first, second = server.tool(token), server.tool(token)
    run(first, create(NOTES, ""))

    def agent(tool: WenchangMemoryToolSync, name: str) -> None:
        for number in range(8):
            outcome = run(tool, insert(NOTES, 0, f"{name}-{number}"))
            assert outcome[0] == "result", outcome

    threads = [
        threading.Thread(target=agent, args=(tool, name))
        for tool, name in ((first, "a"), (second, "b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    content = first.client.read_file("user", "memories-root", "notes.md").content
    first.close()
    second.close()
    assert sorted(content.splitlines()) == sorted(
        f"{name}-{number}" for name in "ab" for number in range(8)
    )
