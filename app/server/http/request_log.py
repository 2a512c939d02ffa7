"""Request ids on every log line, and JSON-lines logs (``WENCHANG_LOG_FORMAT=json``).

``identified`` gives every HTTP request its id before anything else runs (the
front door calls it): the caller's ``x-request-id`` when it is safe, else a new
one, written into the request so Tenchi, the guards and the error envelope all
use that same id. Log records made while the request runs carry it as
``request_id``.
"""

import json
import logging
import os
import sys
from contextvars import ContextVar
from datetime import UTC, datetime

from starlette.types import Scope

from app.server.http.error_envelope import SAFE_REQUEST_ID

HEADER = b"x-request-id"
current_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)


def inbound_request_id(scope: Scope, names: list[bytes]) -> str | None:
    """The first ``x-request-id`` when it is safe; ``names``: the header names."""
    if HEADER not in names:
        return None
    text = scope["headers"][names.index(HEADER)][1].decode("latin-1")
    return text if SAFE_REQUEST_ID.match(text) else None


def identified(scope: Scope, names: list[bytes]) -> tuple[Scope, str]:
    """The request with one safe ``x-request-id``, and that id.

    ``names`` are the request's header names, in order (the front door lists
    them once for every check it makes). A minted id is written into the
    request (Tenchi answers with it) rather than left for Tenchi to mint, so
    the log lines of the whole request, the guards before Tenchi and the
    response all name one id.
    """
    request_id = inbound_request_id(scope, names)
    if request_id is not None:
        return scope, request_id
    request_id = os.urandom(16).hex()  # as uuid4().hex, at a fifth of its cost
    kept = scope["headers"]
    if HEADER in names:  # unsafe ones: the minted id replaces them all
        kept = [item for item in kept if item[0] != HEADER]
    return {**scope, "headers": [*kept, (HEADER, request_id.encode())]}, request_id


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, request_id, fields."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, object] = dict(getattr(record, "wenchang", None) or {})
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line |= fields
        line["request_id"] = current_request_id.get() or fields.get("request_id")
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_json_logs() -> None:
    """Send every log record to stderr as a JSON line (uvicorn's included)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
