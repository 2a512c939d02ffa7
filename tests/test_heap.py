"""A serving app freezes its start-up heap once started; an app built for a test
does not (a process that builds many apps would keep every one)."""

import gc
from pathlib import Path

from tenchi.testing import open_http

from app.server.asgi import build_app
from app.server.settings import Settings


def _settings(tmp_path: Path) -> Settings:
    return Settings(storage="memory://", tokens_file=str(tmp_path / "tokens.json"))


async def test_a_serving_app_freezes_what_start_up_built(tmp_path: Path) -> None:
    gc.unfreeze()
    app = build_app(_settings(tmp_path), freeze_heap=True)
    try:
        async with open_http(app) as http:
            frozen = gc.get_freeze_count()
            assert (await http.get("/health")).status_code == 200
    finally:
        gc.unfreeze()
    assert frozen > 0


async def test_an_app_built_without_asking_freezes_nothing(tmp_path: Path) -> None:
    gc.unfreeze()
    async with open_http(build_app(_settings(tmp_path))) as http:
        assert (await http.get("/health")).status_code == 200
        frozen = gc.get_freeze_count()
    assert frozen == 0
