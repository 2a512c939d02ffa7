"""The app uses only the public APIs of its libraries.

No name imported from a library's private namespace (a leading underscore), no
private attribute the app never defines (``self._download`` inherited from a
library's class, ``session._connector``), no ``__pydantic_*__`` attribute, no
silenced private-usage check. A patch release of
a library may change what is private without notice; where we would need a hook a
library lacks, it is asked for in ``docs/upstream.md``.
"""

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("app/server", "app/features", "app/shared", "app/infra")


def _sources() -> list[Path]:
    return sorted(path for part in CHECKED for path in (ROOT / part).rglob("*.py"))


PUBLIC_UNDERSCORED = frozenset({"_exit", "_replace", "_asdict", "_fields", "_make"})
"""Documented public names with a leading underscore (``os._exit``, namedtuple's)."""


def _defined_names(sources: list[Path]) -> frozenset[str]:
    """Every name the app's own code defines: functions, classes, attributes it
    assigns, parameters, variables, ``__slots__`` strings."""
    names: set[str] = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return frozenset(names)


def _foreign_private_attributes(path: Path, defined: frozenset[str]) -> list[str]:
    """``x._name`` where no module of the app defines ``_name``: a library's."""
    return [
        f"{path.name}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and node.attr not in defined | PUBLIC_UNDERSCORED
    ]


REACHING = frozenset({"getattr", "hasattr", "setattr", "__setattr__", "delattr"})


def _reaches_by_name(node: ast.AST) -> bool:
    """``getattr(x, "_name")`` and its kin: a private attribute named in a string."""
    if not isinstance(node, ast.Call) or len(node.args) < 2:
        return False
    function = node.func
    name = function.id if isinstance(function, ast.Name) else None
    if isinstance(function, ast.Attribute):
        name = function.attr
    attribute = node.args[1]
    return (
        name in REACHING
        and isinstance(attribute, ast.Constant)
        and isinstance(attribute.value, str)
        and attribute.value.startswith("_")
        and not (attribute.value.startswith("__") and attribute.value.endswith("__"))
    )


def _private_uses(path: Path) -> list[str]:
    text = path.read_text()
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if "__pydantic_" in line or "reportPrivateUsage" in line
    ]
    for node in ast.walk(ast.parse(text)):
        if _reaches_by_name(node):
            found.append(
                f"{path.name}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)}"
            )
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            if module.split(".")[0] in ("app", "tests"):
                continue
            found += [
                f"{path.name}:{node.lineno}: from {module} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_")
            ]
    return found


def test_no_private_name_of_a_library() -> None:
    sources = _sources()

    assert len(sources) > 100
    assert [use for path in sources for use in _private_uses(path)] == []


def test_no_private_attribute_of_a_library_object() -> None:
    sources = _sources()
    defined = _defined_names(sources)

    found = [
        use for path in sources for use in _foreign_private_attributes(path, defined)
    ]
    assert found == []


def test_the_check_finds_a_private_use(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "from tenchi.mcp import _failure\n"
        "validate = Model.__pydantic_validator__\n"
        'entries = getattr(server, "_entries")\n'
        'object.__setattr__(tool, "_result_schema_validator", None)\n'
    )

    assert len(_private_uses(source)) == 4


def test_the_check_finds_a_private_attribute_of_a_library(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "class Client(Storage):\n"
        "    def __init__(self):\n"
        "        self._mine = 1\n"
        "    async def get(self):\n"
        "        os._exit(self._mine)\n"
        "        return await self._download(session._connector)\n"
    )

    found = _foreign_private_attributes(source, _defined_names([source]))
    assert [use.split(": ", 1)[1] for use in found] == [
        "self._download",
        "session._connector",
    ]


_DOTTED = re.compile(r"`([A-Za-z_][\w.]*\._\w+)`")


def _library_private_mentions(text: str) -> list[str]:
    """Backquoted dotted names that reach a private member through a library's
    module (``mcp._x``): a reader takes them for a library's private API. Our
    own names are spelled from ``app.``."""
    return [
        name
        for name in _DOTTED.findall(text)
        if not name.startswith("app.")
        and name.rsplit(".", 1)[1] not in PUBLIC_UNDERSCORED
        and importlib.util.find_spec(name.split(".", 1)[0]) is not None
    ]


def test_docstrings_name_no_private_member_of_a_library() -> None:
    found = [
        f"{_relative(path)}: {name}"
        for path in _sources()
        for name in _library_private_mentions(path.read_text())
    ]
    assert found == []


def test_the_docstring_check_tells_a_library_from_ours() -> None:
    text = "built by (`mcp._call_context`), by `app.server.mcp.server._call_context`"
    assert _library_private_mentions(text) == ["mcp._call_context"]


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))
