"""The precondition proxy answers ``fields`` as GCS does (fake-gcs-server ignores it).

Without it, a selector that leaves out a field the GCS adapter reads passes
every test against the emulator and fails on GCS.
"""

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.gcs_emulator import TEST_BUCKET, GcsEmulator
from tests.support.gcs_fields import BadSelector, parse, select

PAGE = {
    "kind": "storage#objects",
    "nextPageToken": "t",
    "prefixes": ["a/"],
    "items": [
        {"name": "a", "generation": "1", "size": "3", "metadata": {"k": "v"}},
        {"name": "b", "generation": "2", "size": "0"},
    ],
}


def test_a_listing_selector_keeps_the_named_fields_of_each_item() -> None:
    selection = parse("items(name,generation,metadata),nextPageToken")

    assert select(PAGE, selection) == {
        "nextPageToken": "t",
        "items": [
            {"name": "a", "generation": "1", "metadata": {"k": "v"}},
            {"name": "b", "generation": "2"},
        ],
    }


def test_paths_stars_and_repeats_select_as_gcs_reads_them() -> None:
    assert select(PAGE, parse("items/name")) == {
        "items": [{"name": "a"}, {"name": "b"}]
    }
    assert select(PAGE, parse("items(name),items(size)")) == {
        "items": [{"name": "a", "size": "3"}, {"name": "b", "size": "0"}]
    }
    assert select(PAGE, parse("items,items(name)")) == {"items": PAGE["items"]}
    assert select(PAGE, parse("kind, prefixes")) == {
        "kind": "storage#objects",
        "prefixes": ["a/"],
    }
    assert select(PAGE, parse("*")) == PAGE
    assert select(PAGE, parse("items(metadata/k)")) == {
        "items": [{"metadata": {"k": "v"}}, {}]
    }


def test_names_are_case_sensitive() -> None:
    assert select(PAGE, parse("ITEMS(name),NextPageToken")) == {}


@pytest.mark.parametrize(
    "selector",
    [
        "",
        "items(",
        "items(name",
        "items)",
        "items(name))",
        ",items",
        "items,",
        "a//b",
        "items()",
        "it-ems",
        "()",
    ],
)
def test_a_selector_gcs_could_not_parse_is_refused(selector: str) -> None:
    with pytest.raises(BadSelector):
        parse(selector)


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def _upload(emulator: GcsEmulator, name: str) -> None:
    url = (
        f"{emulator.url}/upload/storage/v1/b/{TEST_BUCKET}/o"
        f"?uploadType=media&name={quote(name, safe='')}"
    )
    request = urllib.request.Request(url, data=b"abc", method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def test_the_proxy_answers_a_listing_with_its_fields_only(
    gcs_emulator: GcsEmulator,
) -> None:
    emulator = gcs_emulator
    _upload(emulator, "fields/one")
    listing = f"{emulator.url}/storage/v1/b/{TEST_BUCKET}/o?prefix=fields/"

    status, whole = _get(listing)
    assert status == 200
    assert {"name", "generation", "size", "bucket"} <= set(whole["items"][0])

    status, page = _get(listing + "&fields=" + quote("items(name,size)"))
    assert status == 200
    assert page == {"items": [{"name": "fields/one", "size": "3"}]}

    status, refused = _get(listing + "&fields=" + quote("items(name"))
    assert status == 400
    assert refused["error"]["message"] == "Invalid field selection"
