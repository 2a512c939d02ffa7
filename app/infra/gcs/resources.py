"""The GCS JSON API documents the adapter reads: an object and a listing page."""

from typing import Required, TypedDict


class ObjectResource(TypedDict, total=False):
    """An object's resource, the fields this adapter reads (listings may ask
    for fewer with ``fields``; name and generation are always among them)."""

    name: Required[str]
    generation: Required[str]
    metadata: dict[str, str]
    size: str
    md5Hash: str
    timeCreated: str
    timeDeleted: str


class ObjectPage(TypedDict, total=False):
    """One page of a listing: its objects, and a token when more follow."""

    items: list[ObjectResource]
    nextPageToken: str
