"""A markdown file of an export: YAML front matter between ``---`` lines, then
the content exactly as stored."""

from typing import cast

import yaml

OPEN = b"---\n"
CLOSE = b"\n---\n"
SUFFIX = ".md"
# libyaml's emitter and parser where PyYAML was built with it (its wheels
# are): four times faster than the pure-Python ones.
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_FILE_NAME_BYTES = 255
"""What Linux, macOS and Windows file systems allow for one file name."""


class FrontMatterError(ValueError):
    """The file is not front matter then content; the message says what is wrong."""


def render(fields: dict[str, object], content: bytes) -> bytes:
    """``fields`` in their given order as YAML (unicode as is, one line each),
    between ``---`` lines, then ``content`` byte for byte."""
    matter = yaml.dump(
        fields,
        Dumper=DUMPER,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        # Never folded: a long description stays on its line in an editor.
        width=2**31 - 1,
    )
    return OPEN + matter.encode() + OPEN + content


def parse(data: bytes) -> tuple[dict[str, object], bytes]:
    """The front matter's mapping and the content after its closing line."""
    if not data.startswith(OPEN):
        raise FrontMatterError("does not start with a '---' line")
    end = data.find(CLOSE, len(OPEN) - 1)
    if end < 0:
        raise FrontMatterError("has no '---' line closing its front matter")
    try:
        loaded = yaml.load(data[len(OPEN) : end + 1].decode(), Loader=LOADER)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise FrontMatterError(f"front matter is not YAML: {exc}") from exc
    if not isinstance(loaded, dict):
        raise FrontMatterError("front matter is not a mapping of fields")
    return cast(dict[str, object], loaded), data[end + len(CLOSE) :]


def file_name(name: str) -> str | None:
    """The file that holds ``name``, or None when no file system can name it."""
    named = name + SUFFIX
    return named if len(named.encode()) <= MAX_FILE_NAME_BYTES else None


def name_of(file: str) -> str | None:
    """The memory name a tree's file holds, or None for a file that is not one."""
    return file.removesuffix(SUFFIX) if file.endswith(SUFFIX) else None
