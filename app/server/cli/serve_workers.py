"""``wenchang serve --workers N``: N server processes sharing one socket.

Each worker builds its own app from the environment, exactly as a single
``wenchang serve`` would; they share state only through the storage (SQLite
file, GCS) and the stores configured beside it, which is what makes several
processes on one SQLite file safe already.
"""

import os

from starlette.applications import Starlette

from app.infra.backend_urls import STORAGE_URLS, Backend, backend_of
from app.server.log_config import configured_logging
from app.server.settings import Settings, load_settings

WORKER_HEALTHCHECK_SECONDS = 60


def served_app() -> Starlette:
    """One worker's app (uvicorn calls this factory in each worker process)."""
    from app.server.asgi import build_app
    from app.server.otel import telemetry_from_environment

    settings = load_settings()
    configured_logging(settings)
    return build_app(
        settings, telemetry=telemetry_from_environment(os.environ), freeze_heap=True
    )


def require_shared_storage(settings: Settings, workers: int) -> None:
    """Refuse workers that would each keep a private memory:// store."""
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and backend_of(settings.storage, STORAGE_URLS) is Backend.MEMORY:
        raise ValueError(
            "--workers needs storage the processes share (sqlite:///…, gcs://…); "
            "with memory:// each worker would keep its own memory"
        )


def run_workers(settings: Settings, host: str, port: int, workers: int) -> int:
    """Serve with ``workers`` processes; the storage URL reaches them by environment."""
    import uvicorn

    require_shared_storage(settings, workers)

    os.environ["WENCHANG_STORAGE"] = settings.storage
    uvicorn.run(
        "app.server.cli.serve_workers:served_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        # A spawned worker imports the whole app before it can answer the
        # supervisor's ping; uvicorn's 5 s kills it on a busy machine.
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        log_level="info",
        log_config=configured_logging(settings),
    )
    return 0
