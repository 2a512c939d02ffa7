"""The codebase stays plain: small use cases and modules, few `Any`, commented
broad excepts, no ContextVar in features or infra, no library's private names,
and a plain domain: no memo decorator or ``object.__setattr__`` in a feature."""

import ast
import io
import statistics
import tokenize
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"
MAX_USE_CASE_LINES = 80
MAX_MEDIAN_USE_CASE_LINES = 30
MAX_MODULE_LINES = 300
MAX_ANY_PER_1000_LINES = 4
LIBRARIES = ("tenchi", "mcp", "starlette", "pydantic", "pydantic_core", "aiosqlite")
BROAD = ("Exception", "BaseException")
NAMED_TUPLE_API = frozenset(
    {"_replace", "_asdict", "_make", "_fields", "_field_defaults"}
)
"""A named tuple's underscore API (``urlsplit``'s result is one): use its fields."""


def _modules(*, tests: bool = False) -> Iterator[Path]:
    for path in sorted(APP.rglob("*.py")):
        if tests or "tests" not in path.relative_to(APP).parts:
            yield path


def _non_blank(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def _use_cases() -> list[Path]:
    return [
        path
        for path in _modules()
        if path.parent.name == "use_cases" and path.name != "__init__.py"
    ]


def _relative(path: Path) -> str:
    return str(path.relative_to(APP.parent))


def test_every_use_case_is_at_most_80_lines_and_their_median_at_most_30() -> None:
    sizes = {_relative(path): _non_blank(path) for path in _use_cases()}

    assert len(sizes) >= 10, "the use cases moved: point _use_cases at them"
    over = {name: size for name, size in sizes.items() if size > MAX_USE_CASE_LINES}
    assert over == {}, f"use cases over {MAX_USE_CASE_LINES} non-blank lines"
    assert statistics.median(sizes.values()) <= MAX_MEDIAN_USE_CASE_LINES, sizes


def test_no_module_of_the_app_is_over_300_lines() -> None:
    modules = _modules(tests=True)
    sizes = {_relative(p): len(p.read_text().splitlines()) for p in modules}

    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def _any_uses(text: str) -> int:
    """Every name token `Any` of the source, its imports included (not words
    in comments or strings): the count AGENTS.md's budget is stated in."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")


def test_any_is_rare() -> None:
    lines = uses = 0
    for path in _modules():
        text = path.read_text()
        lines += len(text.splitlines())
        uses += _any_uses(text)

    assert uses * 1000 <= MAX_ANY_PER_1000_LINES * lines, (
        f"{uses} uses of Any in {lines} lines: over {MAX_ANY_PER_1000_LINES} "
        "per 1,000; give them real types"
    )


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(name, ast.Name) and name.id in BROAD for name in names)


def test_every_broad_except_says_why_it_is_safe() -> None:
    """A comment on the ``except`` line or the line after it."""
    silent: list[str] = []
    for path in _modules():
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.ExceptHandler) and _is_broad(node):
                said = lines[node.lineno - 1 : node.lineno + 1]
                if not any("#" in line for line in said):
                    silent.append(f"{_relative(path)}:{node.lineno}")

    assert silent == []


def test_the_checks_see_what_they_look_for() -> None:
    """Each check above flags a sample of what it forbids."""
    source = (
        "from typing import Any\n"
        "def f(x: Any) -> typing.Any:  # Any in a comment\n"
        "    try:\n"
        "        pass\n"
        "    except (ValueError, Exception):\n"
        "        pass\n"
        "    return 'Any in a string'\n"
    )
    sample = ast.parse(source)
    handlers = [n for n in ast.walk(sample) if isinstance(n, ast.ExceptHandler)]

    assert _any_uses(source) == 3
    assert [_is_broad(h) for h in handlers] == [True]
    assert _private_uses(
        "from tenchi._app_map import x\nimport mcp\nmcp._y\nm.__pydantic_fields__\n"
        "urlsplit(u)._replace(query='')\nself._replace()\n"
    ) == [
        "import tenchi._app_map.x",
        "mcp._y",
        "m.__pydantic_fields__",
        "urlsplit(u)._replace",
    ]


def test_no_context_var_in_features_or_infra() -> None:
    users = [
        _relative(path)
        for path in _modules()
        if path.relative_to(APP).parts[0] in ("features", "infra")
        and "ContextVar" in path.read_text()
    ]

    assert users == []


MEMO_DECORATORS = ("cache", "lru_cache", "cached_property")
"""Memoisation belongs at the edges (infra, server), with a measured figure."""


def _tricks(source: str) -> list[str]:
    """Memo decorators and frozen-object writes in ``source``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = (
                    decorator.func if isinstance(decorator, ast.Call) else decorator
                )
                name = ast.unparse(target).rsplit(".", 1)[-1]
                if name in MEMO_DECORATORS:
                    found.append(f"@{ast.unparse(target)} on {node.name}")
        if isinstance(node, ast.Attribute) and ast.unparse(node) in (
            "object.__setattr__",
            "object.__delattr__",
        ):
            found.append(ast.unparse(node))
    return found


def test_the_features_hold_no_memo_or_frozen_object_write() -> None:
    tricks = [
        f"{_relative(path)}: {trick}"
        for path in _modules()
        if path.relative_to(APP).parts[0] == "features"
        for trick in _tricks(path.read_text())
    ]

    assert tricks == []


def test_the_trick_check_sees_what_it_looks_for() -> None:
    source = (
        "import functools\n"
        "@functools.lru_cache(maxsize=8)\n"
        "def f(): pass\n"
        "@cache\n"
        "async def g(): pass\n"
        "def h(self): object.__setattr__(self, 'x', 1)\n"
    )

    assert _tricks(source) == [
        "@functools.lru_cache on f",
        "@cache on g",
        "object.__setattr__",
    ]


def _private(dotted: str) -> bool:
    """A leading underscore in any part of a dotted name (dunders are public)."""
    parts = dotted.split(".")
    return any(p.startswith("_") and not p.endswith("__") for p in parts)


def _library_imports(tree: ast.AST) -> tuple[list[str], set[str]]:
    """Private imports from LIBRARIES, and the names their imports bind."""
    found: list[str] = []
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] not in LIBRARIES:
                continue
            named = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [f"import {name}" for name in named if _private(name)]
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    found += [f"import {alias.name}"] if _private(alias.name) else []
                    bound.add(alias.asname or alias.name.split(".")[0])
    return found, bound


def _private_uses(source: str) -> list[str]:
    """Private names reached in a library of LIBRARIES, pydantic internals, or
    a named tuple's underscore API on any value but our own ``self``/``cls``."""
    tree = ast.parse(source)
    found, bound = _library_imports(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        reached = f"{ast.unparse(node.value)}.{node.attr}"
        named = node.value.id if isinstance(node.value, ast.Name) else None
        if (
            node.attr.startswith("__pydantic_")
            or (_private(node.attr) and named in bound)
            or (node.attr in NAMED_TUPLE_API and named not in ("self", "cls"))
        ):
            found.append(reached)
    return found


def test_the_app_reaches_no_private_name_of_a_library() -> None:
    """Private imports and attributes of a library's modules and classes, and
    every private member pyright had to be told to allow."""
    found: list[str] = []
    for path in _modules():
        text = path.read_text()
        found += [f"{_relative(path)}: {use}" for use in _private_uses(text)]
        found += [
            f"{_relative(path)}:{number}"
            for number, line in enumerate(text.splitlines(), 1)
            if "reportPrivateUsage" in line
        ]

    assert found == []
