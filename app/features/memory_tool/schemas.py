"""The memory tool's command, as Claude sends it, and its text answer."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.features.memory.schemas import ScopeArg

Command = Literal["view", "create", "str_replace", "insert", "delete", "rename"]


class MemoryCommand(BaseModel):
    """One memory tool command as Claude sends it; the fields its ``command``
    uses, the rest absent."""

    # Claude's command objects may grow fields; ignoring them keeps old servers
    # answering what they know.
    model_config = ConfigDict(extra="ignore")

    command: Command
    path: str | None = Field(default=None, max_length=4096)
    view_range: list[int] | None = Field(default=None, max_length=2)
    file_text: str | None = Field(default=None, max_length=1_048_576)
    old_str: str | None = Field(default=None, max_length=1_048_576)
    new_str: str | None = Field(default=None, max_length=1_048_576)
    insert_line: int | None = None
    insert_text: str | None = Field(default=None, max_length=1_048_576)
    old_path: str | None = Field(default=None, max_length=4096)
    new_path: str | None = Field(default=None, max_length=4096)


class RunMemoryCommand(MemoryCommand):
    """A command on one scope of the caller's."""

    scope: ScopeArg


class MemoryToolAnswer(BaseModel):
    """``result`` on success, else ``error``: the text Claude reads, either way."""

    result: str | None = Field(default=None, exclude_if=lambda value: value is None)
    error: str | None = Field(default=None, exclude_if=lambda value: value is None)
