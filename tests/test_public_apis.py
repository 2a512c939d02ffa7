"""The app uses only the public APIs of its libraries.

No name imported from a library's private namespace (a leading underscore), no
``__pydantic_*__`` attribute, no silenced private-usage check. A patch release of
a library may change what is private without notice; where we would need a hook a
library lacks, it is asked for in ``docs/upstream.md``.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("app/server", "app/features", "app/shared", "app/infra")


def _sources() -> list[Path]:
    return sorted(path for part in CHECKED for path in (ROOT / part).rglob("*.py"))


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


def test_the_check_finds_a_private_use(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "from tenchi.mcp import _failure\n"
        "validate = Model.__pydantic_validator__\n"
        'entries = getattr(server, "_entries")\n'
        'object.__setattr__(tool, "_result_schema_validator", None)\n'
    )

    assert len(_private_uses(source)) == 4
