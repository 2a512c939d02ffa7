"""A segment that hides '/' as %2F is an invalid argument, never a re-routed path."""

from pathlib import Path

from starlette.applications import Starlette
from tenchi.testing import open_http

from app.infra.tokens.token_file_resolver import FixedResolver
from app.server.asgi import build_app
from app.server.http.encoded_slash_guard import malformed_segment
from app.server.settings import Settings
from app.shared.identity import Grant, Identity

AUTH = {"Authorization": "Bearer any"}


def _app(tmp_path: Path) -> Starlette:
    identity = Identity(grants={"user": Grant(entity_id="alice", role="owner")})
    settings = Settings(storage="memory://", tokens_file=str(tmp_path / "tokens.json"))
    return build_app(settings, resolver=FixedResolver(identity), on_call=())


def test_malformed_segment_names_the_segment() -> None:
    """The guard reports the first raw segment carrying %2F, in any case."""
    slash = "must not contain '/' (sent encoded as %2F)"
    assert malformed_segment(b"/v1/files/user%2Fnotes/tea") == ("scope", slash)
    assert malformed_segment(b"/v1/files/user/no%2ftes/tea") == ("area", slash)
    assert malformed_segment(b"/v1/files/user/notes/a%2Fb/lines") == ("name", slash)
    assert malformed_segment(b"/v1/files/user/notes/tea") is None
    assert malformed_segment(b"/v1/files/user/notes/%C3%A9t%C3%A9") is None
    assert malformed_segment(b"/mcp/a%2Fb") is None


def test_a_segment_that_is_not_utf8_is_named() -> None:
    """%FF, a lone surrogate's bytes or a raw non-UTF-8 byte is malformed."""
    utf8 = "must be UTF-8 once percent-decoded"
    assert malformed_segment(b"/v1/files/user/notes/%FF") == ("name", utf8)
    assert malformed_segment(b"/v1/files/user/notes/%ED%A0%80") == ("name", utf8)
    assert malformed_segment(b"/v1/files/user/n\xffotes/tea") == ("area", utf8)


async def test_delete_with_an_encoded_slash_deletes_nothing(tmp_path: Path) -> None:
    """DELETE /v1/files/user%2Fnotes/tea is 422 and user/notes/tea survives."""
    async with open_http(_app(tmp_path)) as http:
        created = await http.put(
            "/v1/files/user/notes/tea",
            json={"content": "x", "description": "", "aliases": []},
            headers=AUTH | {"If-None-Match": "*"},
        )
        etag = created.headers["etag"]

        rejected = await http.delete(
            "/v1/files/user%2Fnotes/tea", headers=AUTH | {"If-Match": etag}
        )
        still_there = await http.get("/v1/files/user/notes/tea", headers=AUTH)

    assert rejected.status_code == 422
    assert rejected.json()["details"]["argument"] == "scope"
    assert still_there.status_code == 200


async def test_encoded_slash_in_a_name_is_an_invalid_name(tmp_path: Path) -> None:
    """GET …/notes/a%2Fb names `name` as the invalid argument."""
    async with open_http(_app(tmp_path)) as http:
        response = await http.get("/v1/files/user/notes/a%2Fb", headers=AUTH)

    assert response.status_code == 422
    assert response.json()["code"] == "INVALID_ARGUMENT"
    assert response.json()["details"]["argument"] == "name"


async def test_unauthenticated_encoded_slash_still_gets_401(tmp_path: Path) -> None:
    """Authentication is checked before the path's syntax."""
    async with open_http(_app(tmp_path)) as http:
        response = await http.get("/v1/files/user%2Fnotes/tea")

    assert response.status_code == 401


async def test_a_name_that_is_not_utf8_is_invalid_and_creates_nothing(
    tmp_path: Path,
) -> None:
    """PUT …/notes/%FF is 422 on name; no file named U+FFFD appears."""
    async with open_http(_app(tmp_path)) as http:
        refused = await http.put(
            "/v1/files/user/notes/%FF",
            json={"content": "x", "description": "", "aliases": []},
            headers=AUTH | {"If-None-Match": "*"},
        )
        listed = await http.get("/v1/files/user/notes", headers=AUTH)

    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "INVALID_ARGUMENT"
    assert refused.json()["details"]["argument"] == "name"
    assert listed.json()["entries"] == []
