"""ETags and conditional requests: If-Match, If-None-Match, 412 and 428."""

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.http_support import (
    FILE,
    Api,
    Headers,
    assert_app_error,
    assert_validation_error,
    create,
    file_body,
    if_match,
    open_api,
    state,
)

LOCATION = {"scope": "user", "area": "notes", "name": "tea"}
LINE = {"line": "- [stated] More."}
REPLACEMENT = {"old_string": "tea", "new_string": "coffee"}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncGenerator[Api]:
    async with open_api(tmp_path) as api:
        yield api


ROUTES: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "put": ("PUT", FILE, file_body("new")),
    "lines": ("POST", f"{FILE}/lines", LINE),
    "replace": ("POST", f"{FILE}/replace", REPLACEMENT),
    "delete": ("DELETE", FILE, None),
}


async def mutate(
    api: Api, operation: str, headers: Headers, body: dict[str, Any] | None = None
) -> httpx.Response:
    """Send one of the four mutations of the tea file as alice."""
    method, path, default = ROUTES[operation]
    return await api.http.request(
        method, path, json=body or default, headers=api.alice | headers
    )


MUTATIONS = ["put", "lines", "replace", "delete"]
POST_OR_DELETE = ["lines", "replace", "delete"]


@pytest.mark.parametrize("operation", MUTATIONS)
async def test_a_mutation_without_a_precondition_is_428(
    api: Api, operation: str
) -> None:
    """Every mutation needs If-Match (or If-None-Match: * to create) — else 428."""
    await create(api)
    before = await state(api)

    response = await mutate(api, operation, {})

    assert_app_error(
        response,
        428,
        "PRECONDITION_REQUIRED",
        error="PreconditionRequiredError",
        category="recoverable",
    )
    assert await state(api) == before


@pytest.mark.parametrize("operation", ["put", "lines", "delete"])
async def test_a_stale_if_match_is_412_with_the_current_etag(
    api: Api, operation: str
) -> None:
    """A stale version answers 412, the current ETag and the current content."""
    first = await create(api)
    current = (
        await api.http.put(
            FILE,
            json=file_body("- [stated] Likes green tea.\n"),
            headers=api.alice | if_match(first["version"]),
        )
    ).json()
    before = await state(api)

    response = await mutate(api, operation, if_match(first["version"]))

    assert_app_error(
        response,
        412,
        "VERSION_CONFLICT",
        error="VersionConflictError",
        category="recoverable",
        content="- [stated] Likes green tea.\n",
        version=current["version"],
        **LOCATION,
    )
    assert response.headers["ETag"] == f'"{current["version"]}"'
    assert await state(api) == before


async def test_a_stale_replace_with_a_unique_match_is_reapplied(api: Api) -> None:
    """replace_fact forgives a stale version while its match stays unique."""
    first = await create(api)
    await api.http.post(
        f"{FILE}/lines", json=LINE, headers=api.alice | if_match(first["version"])
    )

    response = await mutate(api, "replace", if_match(first["version"]))

    assert response.status_code == 200
    assert response.json()["content"] == "- [stated] Likes coffee.\n- [stated] More.\n"


async def test_a_stale_replace_without_a_unique_match_is_412(api: Api) -> None:
    """replace_fact conflicts when the stale version's match is gone."""
    first = await create(api)
    current = (
        await api.http.put(
            FILE,
            json=file_body("- [stated] Likes coffee.\n"),
            headers=api.alice | if_match(first["version"]),
        )
    ).json()

    response = await mutate(api, "replace", if_match(first["version"]))

    assert response.status_code == 412
    assert response.headers["ETag"] == f'"{current["version"]}"'
    assert response.json()["details"]["content"] == "- [stated] Likes coffee.\n"


async def test_put_create_over_an_existing_file_is_412(api: Api) -> None:
    """If-None-Match: * on an existing file conflicts with its content and ETag."""
    existing = await create(api)

    response = await mutate(api, "put", {"If-None-Match": "*"})

    assert response.status_code == 412
    assert response.headers["ETag"] == f'"{existing["version"]}"'
    assert response.json()["details"]["content"] == existing["content"]


@pytest.mark.parametrize("operation", MUTATIONS)
async def test_if_match_on_a_missing_file_is_404_file_absent(
    api: Api, operation: str
) -> None:
    """A version against a file that does not exist is NotFound, nothing created."""
    response = await mutate(api, operation, if_match("1"))

    assert_app_error(
        response,
        404,
        "MEMORY_NOT_FOUND",
        error="NotFoundError",
        category="recoverable",
        reason="file_absent",
        **LOCATION,
    )
    assert (await state(api))[0] == {"entries": [], "capped": []}


@pytest.mark.parametrize("operation", POST_OR_DELETE)
async def test_if_none_match_on_post_or_delete_is_invalid_expected_version(
    api: Api, operation: str
) -> None:
    """If-None-Match means create-only on PUT; elsewhere it is a wrong argument."""
    first = await create(api)
    before = await state(api)

    response = await mutate(
        api, operation, if_match(first["version"]) | {"If-None-Match": "*"}
    )

    assert_app_error(
        response,
        422,
        "INVALID_ARGUMENT",
        error="InvalidArgumentError",
        category="recoverable",
        argument="expected_version",
    )
    assert await state(api) == before


async def test_put_with_both_preconditions_is_invalid_expected_version(
    api: Api,
) -> None:
    """A PUT is either a create or a replace, never both."""
    first = await create(api)
    before = await state(api)

    response = await mutate(
        api, "put", if_match(first["version"]) | {"If-None-Match": "*"}
    )

    assert response.status_code == 422
    assert response.json()["details"]["argument"] == "expected_version"
    assert await state(api) == before


MALFORMED_IF_MATCH = ["*", 'W/"1"', '"1", "2"', "1", '"1', '""']


@pytest.mark.parametrize("operation", MUTATIONS)
async def test_a_malformed_if_match_is_a_validation_error(
    api: Api, operation: str
) -> None:
    """If-Match is exactly one strong quoted ETag; `*`, weak or listed ETags are 422."""
    await create(api)
    before = await state(api)

    for value in MALFORMED_IF_MATCH:
        response = await mutate(api, operation, {"If-Match": value})

        assert_validation_error(response)
    assert await state(api) == before


async def test_put_with_an_if_none_match_other_than_star_is_rejected(api: Api) -> None:
    """Only `*` has a meaning for If-None-Match."""
    response = await mutate(api, "put", {"If-None-Match": '"1"'})

    assert response.status_code == 422
    assert (await state(api))[0]["entries"] == []


async def test_retrying_with_the_conflict_etag_succeeds(api: Api) -> None:
    """The ETag of a 412 is the version to retry with."""
    first = await create(api)
    await mutate(api, "put", if_match(first["version"]))
    conflict = await mutate(api, "put", if_match(first["version"]))

    retried = await mutate(
        api, "put", {"If-Match": conflict.headers["ETag"]}, file_body("merged")
    )

    assert retried.status_code == 200
    assert retried.json()["content"] == "merged"
