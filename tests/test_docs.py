"""Every command in README.md and docs/ runs, so the documentation cannot rot.

A fenced block's info string says what happens to it:

- ```` ```bash ```` / ```` ```python ````: run (bash with ``-euo pipefail``) in a
  scratch directory whose ``WENCHANG_*`` settings point at the scratch store;
- ```` ```bash server ```` / ```` ```python server ````: run the same way while a real
  ``wenchang serve`` answers on loopback; ``wct_...`` becomes its first token and
  ``http://127.0.0.1:8000`` its address;
- ```` ```bash illustrative ````: not run, because it needs what CI does not have (a
  cloud account, another program, a long run) or runs forever;
- ```` ```json ```` / ```` ```toml ````: parsed.
"""

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.server.settings import Settings
from tests.support.server import ServerProcess, clean_env, running_server

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)([^\n]*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
TAGS = {"", "server", "illustrative"}
PARSERS: dict[str, Callable[[str], Any]] = {"json": json.loads, "toml": tomllib.loads}
TOKEN = re.compile(r"wct_[A-Za-z0-9_-]{16,}")
DOCUMENTED_URL = "http://127.0.0.1:8000"
BLOCK_SECONDS = 180
README_LINES = 250


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    tag: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for page in PAGES:
        source = page.read_text()
        for match in FENCE.finditer(source):
            indent, language, tag, body = match.groups()
            text = textwrap.dedent(
                "\n".join(line.removeprefix(indent) for line in body.splitlines())
            )
            line = source.count("\n", 0, match.start()) + 1
            name = str(page.relative_to(ROOT))
            found.append(Block(name, line, language, tag.strip(), text))
    return found


BLOCKS = blocks()
RUN = [b for b in BLOCKS if b.language in ("bash", "python") and b.tag == ""]
SERVED = [b for b in BLOCKS if b.language in ("bash", "python") and b.tag == "server"]
PARSED = [b for b in BLOCKS if b.language in PARSERS]


@dataclass(frozen=True)
class Scratch:
    directory: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    directory = tmp_path_factory.mktemp("docs")
    settings = {
        "WENCHANG_STORAGE": f"sqlite:///{directory / 'wenchang.db'}",
        "WENCHANG_TOKENS_FILE": str(directory / "wenchang-tokens.json"),
    }
    env = clean_env(settings)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return Scratch(directory, env)


@pytest.fixture(scope="module")
def server(
    scratch: Scratch, tmp_path_factory: pytest.TempPathFactory
) -> Generator[tuple[ServerProcess, str]]:
    settings = {k: v for k, v in scratch.env.items() if k.startswith("WENCHANG_")}
    logs = tmp_path_factory.mktemp("docs-logs")
    with running_server(scratch.directory, logs=logs, settings=settings) as process:
        token = TOKEN.search(process.stdout())
        assert token, process.describe()
        yield process, token.group()


def run(block: Block, scratch: Scratch) -> subprocess.CompletedProcess[str]:
    command = (
        ["bash", "-euo", "pipefail", "-c", block.text]
        if block.language == "bash"
        else [sys.executable, "-c", block.text]
    )
    return subprocess.run(
        command,
        cwd=scratch.directory,
        env=scratch.env,
        capture_output=True,
        text=True,
        timeout=BLOCK_SECONDS,
        check=False,
    )


def test_every_block_has_a_known_tag() -> None:
    """A typo in a tag must not silently skip a block."""
    assert [b.id for b in BLOCKS if b.tag not in TAGS] == []


@pytest.mark.parametrize("block", PARSED, ids=lambda b: b.id)
def test_json_and_toml_blocks_parse(block: Block) -> None:
    """Configuration snippets are valid JSON or TOML as printed."""
    PARSERS[block.language](block.text)


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_command_blocks_run(
    block: Block, scratch: Scratch, server: tuple[ServerProcess, str]
) -> None:
    """Each command block exits 0 on the scratch store (its server already up)."""
    result = run(block, scratch)

    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("block", SERVED, ids=lambda b: b.id)
def test_server_blocks_run_against_a_live_server(
    block: Block, scratch: Scratch, server: tuple[ServerProcess, str]
) -> None:
    """Each block that talks to a server exits 0 against a real one."""
    process, token = server
    text = block.text.replace("wct_...", token).replace(DOCUMENTED_URL, process.url)

    result = run(
        Block(block.page, block.line, block.language, block.tag, text), scratch
    )

    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"


def test_the_readme_is_a_front_door() -> None:
    """The README stays short; depth lives in docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_LINES


def test_every_local_link_resolves() -> None:
    """A link from the README or docs/ to a repository file points at one."""
    broken: list[str] = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")

    assert broken == []


def test_every_setting_is_documented() -> None:
    """docs/configuration.md names every WENCHANG_* setting."""
    page = (ROOT / "docs" / "configuration.md").read_text()
    names = [f"WENCHANG_{name.upper()}" for name in Settings.model_fields]

    assert [name for name in names if name not in page] == []


def test_nothing_points_outside_the_repository() -> None:
    """Code, tests and docs never cite files a clone does not have."""
    outside = re.compile(
        "|".join(["\\.\\./" + "shared", "SPEC" + "\\.md", "SPEC" + " §"])
    )
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()

    citing = [
        name
        for name in tracked
        if (ROOT / name).is_file()
        and outside.search((ROOT / name).read_text(errors="replace"))
    ]

    assert citing == []
