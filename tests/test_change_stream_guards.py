"""The change stream is guarded like every other read (docs/changes.md).

Opening ``GET /v1/changes`` as Server-Sent Events spends one request of the
token's rate limit (a spent allowance is 429 before any event) and is recorded
in the audit log as one ``read_changes`` call, refusals included.
"""

from pathlib import Path

from tests.http_support import open_api
from tests.support.audited_app import open_audited

STREAM = {"accept": "text/event-stream"}


async def test_an_exhausted_rate_limit_refuses_the_stream(tmp_path: Path) -> None:
    async with open_api(tmp_path, rate_limit=1) as api:
        page = await api.http.get(
            "/v1/changes", params={"scope": "user"}, headers=api.alice
        )
        assert page.status_code == 200
        refused = await api.http.get(
            "/v1/changes", params={"scope": "user"}, headers=api.alice | STREAM
        )
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("application/json")
    assert int(refused.headers["retry-after"]) >= 1


async def test_a_stream_refused_for_its_cursor_is_audited(tmp_path: Path) -> None:
    async with open_audited(tmp_path) as api:
        alice = api.alice.headers
        refused = await api.http.get(
            "/v1/changes",
            params={"scope": "user"},
            headers=alice | STREAM | {"last-event-id": "not-a-cursor"},
        )
        assert refused.status_code == 422
        answer = await api.http.get("/v1/audit", headers=alice)
    events = answer.json()["events"]
    assert [(e["operation"], e["outcome"], e["surface"]) for e in events] == [
        ("read_changes", "INVALID_ARGUMENT", "http")
    ]
