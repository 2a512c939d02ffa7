"""Which logs a serving process writes: JSON lines, or uvicorn's own format."""

from uvicorn.config import LOGGING_CONFIG

from app.server.http.request_log import configure_json_logs
from app.server.settings import Settings


def configured_logging(settings: Settings) -> dict[str, object] | None:
    """Set up JSON-lines logs when asked; uvicorn's log config (None: keep ours)."""
    if settings.log_format == "json":
        configure_json_logs()
        return None
    return LOGGING_CONFIG
