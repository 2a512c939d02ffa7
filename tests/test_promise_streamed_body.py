"""A streamed body over ``WENCHANG_MAX_REQUEST_BYTES`` on ``/v1`` (docs/http.md).

Without ``Content-Length`` (chunked), the API refuses the request with
``413 REQUEST_TOO_LARGE`` as soon as the body passes the limit, and nothing is
written; a streamed body under the limit is served as usual.
"""

import json
from collections.abc import AsyncIterator
from pathlib import Path

from tests.http_support import FILE, file_body, open_api, state

LIMIT = 2048


async def chunks(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), 512):
        yield body[start : start + 512]


async def test_a_streamed_body_over_the_limit_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    over = json.dumps(file_body("x" * (LIMIT * 4))).encode()
    under = json.dumps(file_body("- [stated] Small.\n")).encode()
    async with open_api(tmp_path, max_request_bytes=LIMIT) as api:
        headers = api.alice | {"If-None-Match": "*", "Content-Type": "application/json"}
        refused = await api.http.put(FILE, content=chunks(over), headers=headers)
        after_refusal = await state(api)
        served = await api.http.put(FILE, content=chunks(under), headers=headers)

    assert "content-length" not in refused.request.headers
    assert refused.status_code == 413, refused.text
    assert refused.json()["code"] == "REQUEST_TOO_LARGE"
    assert refused.json()["details"]["limit"] == LIMIT
    assert after_refusal[0]["entries"] == []
    assert served.status_code == 201, served.text
