"""Request ids (docs/http.md, "Request ids"), over HTTP.

A caller's own ``x-request-id`` of 1 to 200 characters of ``A-Za-z0-9._:-`` is the
request's id: the response header, the error body and the audit event carry it.
Any other value is replaced by a fresh id, so nothing a caller sends unchecked
reaches logs or the audit log under the name of an id.
"""

import re
from pathlib import Path

from tests.support.audited_app import open_audited

SAFE = re.compile(r"[A-Za-z0-9._:-]{1,200}")
MISSING = "/v1/files/user/notes/absent"


UNSAFE = ("has space", "x" * 201, "semi;colon", 'quote"d', "tab\tbed", "<b>")


async def test_an_unsafe_request_id_is_replaced_everywhere(tmp_path: Path) -> None:
    async with open_audited(tmp_path) as api:
        answers = [
            await api.http.get(
                MISSING, headers=api.alice.headers | {"x-request-id": sent}
            )
            for sent in UNSAFE
        ]
        events = await api.http.get("/v1/audit", headers=api.alice.headers)

    recorded = [event["request_id"] for event in reversed(events.json()["events"])]
    assert recorded[: len(UNSAFE)] == [a.headers["x-request-id"] for a in answers]
    for sent, answer in zip(UNSAFE, answers, strict=True):
        used = answer.headers["x-request-id"]
        assert answer.status_code == 404, answer.text
        assert used != sent and SAFE.fullmatch(used)
        assert answer.json()["request_id"] == used


async def test_a_safe_request_id_is_used_everywhere(tmp_path: Path) -> None:
    sent = "Ab9._:-" + "z" * 193
    async with open_audited(tmp_path) as api:
        answer = await api.http.get(
            MISSING, headers=api.alice.headers | {"x-request-id": sent}
        )
        events = await api.http.get("/v1/audit", headers=api.alice.headers)

    assert answer.headers["x-request-id"] == answer.json()["request_id"] == sent
    assert events.json()["events"][-1]["request_id"] == sent
