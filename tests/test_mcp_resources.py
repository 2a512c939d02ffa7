"""Memory files as MCP resources over streamable HTTP (docs/mcp.md, "Resources")."""

from collections.abc import Iterator

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.settings import Settings
from app.shared.identity import parse_grants
from tests.mcp_support import http_session, serve

NAME = "Café Crème"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    tmp = tmp_path_factory.mktemp("mcp-resources")
    tokens = tmp / "tokens.json"
    alice, _ = create_token(tokens, parse_grants(["user=alice:owner"]))
    bob, _ = create_token(tokens, parse_grants(["user=bob:owner"]))
    settings = Settings(storage="memory://", tokens_file=str(tokens))
    with serve(build_app(settings)) as url:
        body: dict[str, object] = {
            "content": "- [stated] Meets Jo.\n",
            "description": "d",
            "aliases": [],
        }
        created = httpx.put(
            f"{url}/v1/files/user/places/{NAME}",
            json=body,
            headers={"Authorization": f"Bearer {alice}", "If-None-Match": "*"},
        )
        assert created.status_code == 201, created.text
        yield url, alice, bob


async def test_a_file_is_a_resource_of_the_template(
    server: tuple[str, str, str],
) -> None:
    url, alice, _ = server
    async with http_session(url, alice) as session:
        templates = (await session.list_resource_templates()).resource_templates
        read = await session.read_resource(
            "wenchang://user/places/Caf%C3%A9%20Cr%C3%A8me"
        )
    [template] = templates
    assert template.uri_template == "wenchang://{scope}/{area}/{name}"
    [content] = read.contents
    assert getattr(content, "text", None) == "- [stated] Meets Jo.\n"
    assert content.mime_type == "text/markdown"
    # The file's last_updated, as read_file answers it (ISO 8601, UTC).
    file = httpx.get(
        f"{url}/v1/files/user/places/{NAME}",
        headers={"Authorization": f"Bearer {alice}"},
    )
    assert content.meta == {"lastModified": file.json()["last_updated"]}
    assert file.json()["last_updated"].endswith("Z")


async def test_another_entity_reads_its_own_file_there_not_the_owners(
    server: tuple[str, str, str],
) -> None:
    url, _, bob = server
    async with http_session(url, bob) as session:
        with pytest.raises(MCPError) as raised:
            await session.read_resource("wenchang://user/places/Caf%C3%A9%20Cr%C3%A8me")
    # bob's user scope is his own entity: no such file there (the SDK reports a
    # failed template read without our error's details).
    assert "Meets Jo" not in str(raised.value)


async def test_the_callers_files_are_listed_with_when_they_changed(
    server: tuple[str, str, str],
) -> None:
    url, alice, bob = server
    async with http_session(url, alice) as session:
        listed = (await session.list_resources()).resources
    async with http_session(url, bob) as session:
        bobs = (await session.list_resources()).resources
    file = httpx.get(
        f"{url}/v1/files/user/places/{NAME}",
        headers={"Authorization": f"Bearer {alice}"},
    ).json()
    [resource] = [r for r in listed if r.uri.startswith("wenchang://user/")]
    assert resource.uri == "wenchang://user/places/Caf%C3%A9%20Cr%C3%A8me"
    assert resource.name == f"user/places/{NAME}"
    assert resource.mime_type == "text/markdown"
    assert resource.annotations is not None
    assert resource.annotations.last_modified == file["last_updated"]
    # bob's list holds the memory prompt only: alice's file is not his.
    assert [r.uri for r in bobs] == ["wenchang://memory-prompt"]
