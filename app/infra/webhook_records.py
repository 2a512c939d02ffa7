"""An endpoint as one JSON object: what the SQLite, file and GCS stores keep."""

import json
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from app.features.webhooks.domain import Endpoint

_MOMENTS = frozenset(f.name for f in fields(Endpoint) if "datetime" in str(f.type))


def endpoint_json(endpoint: Endpoint) -> bytes:
    record: dict[str, Any] = asdict(endpoint)
    for name in _MOMENTS:
        moment = record[name]
        record[name] = None if moment is None else moment.isoformat()
    return json.dumps(record, sort_keys=True).encode()


def endpoint_of(data: bytes | str) -> Endpoint:
    record: dict[str, Any] = json.loads(data)
    for name in _MOMENTS:
        text = record.get(name)
        record[name] = None if text is None else datetime.fromisoformat(text)
    return Endpoint(**record)
