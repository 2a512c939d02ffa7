"""GET /v1/export/markdown: the caller's own files as a zip of the markdown tree."""

import io
import zipfile
from pathlib import Path

from app.server.settings import Settings
from app.server.tasks import build_task_runner
from tests.http_support import file_body, open_api
from tests.http_support import if_match as if_match

TREE = "user/notes/café ☕.md"


async def test_the_zip_holds_each_own_file_as_the_markdown_export_writes_it(
    tmp_path: Path,
) -> None:
    database = tmp_path / "w.db"
    async with open_api(
        tmp_path, storage=f"sqlite:///{database}", max_file_bytes=4096
    ) as api:
        for path, body, who in (
            (
                "/v1/files/user/notes/café ☕",
                file_body("- [stated] 日本語\r\n"),
                api.alice,
            ),
            ("/v1/files/team/plans/q1", file_body("- [stated] Ship it.\n"), api.bob),
        ):
            created = await api.http.put(
                path, json=body, headers=who | {"If-None-Match": "*"}
            )
            assert created.status_code == 201, created.text
        gone = await api.http.put(
            "/v1/files/user/notes/old",
            json=file_body() | {"expires_at": "2020-01-01T00:00:00Z"},
            headers=api.alice | {"If-None-Match": "*"},
        )
        assert gone.status_code == 201, gone.text
        other = await api.http.put(
            "/v1/files/user/notes/bobs",
            json=file_body(),
            headers=api.bob | {"If-None-Match": "*"},
        )
        assert other.status_code == 201, other.text

        response = await api.http.get("/v1/export/markdown", headers=api.alice)
        one_scope = await api.http.get(
            "/v1/export/markdown", params={"scope": "user"}, headers=api.alice
        )
        refused = await api.http.get("/v1/export/markdown")
        foreign = await api.http.get(
            "/v1/export/markdown", params={"scope": "org"}, headers=api.alice
        )

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert "attachment" in response.headers["content-disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == ["team/plans/q1.md", TREE]
    one = zipfile.ZipFile(io.BytesIO(one_scope.content))
    assert one.namelist() == [TREE]
    assert refused.status_code == 401
    assert foreign.status_code == 422
    assert foreign.json()["details"]["argument"] == "scope"

    runner = build_task_runner(
        Settings(storage=f"sqlite:///{database}", tokens_file=str(tmp_path / "t.json"))
    )
    tree = tmp_path / "tree"
    await runner.run(
        "memory.export_markdown",
        input={"scope": "user", "entity_id": "alice", "path": str(tree)},
    )
    assert archive.read(TREE) == (tree / TREE).read_bytes()
