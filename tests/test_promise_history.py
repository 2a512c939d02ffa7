"""History retention as configured (docs/history.md, "Retention"), over HTTP.

``WENCHANG_HISTORY_MAX_VERSIONS`` reaches every backend's pruning: after more
changes than the limit, a file's history lists exactly the newest ones, and
the newest record (here a delete's tombstone) is kept.
"""

from pathlib import Path

import pytest

from tests.http_support import FILE, create, file_body, if_match, open_api
from tests.support.storage_adapters import storage_url


@pytest.mark.parametrize("backend", ["sqlite", "file", "gcs"])
async def test_a_file_keeps_only_its_newest_versions(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if backend == "gcs":
        request.getfixturevalue("gcs_emulator")
    storage = storage_url(backend, tmp_path)
    limits = {"history_max_versions": 3, "list_page_size": 10}
    async with open_api(tmp_path, storage=storage, **limits) as api:
        version = (await create(api))["version"]
        versions = [version]
        for n in range(4):
            changed = await api.http.put(
                FILE,
                json=file_body(f"- [stated] {n}\n"),
                headers=api.alice | if_match(version),
            )
            assert changed.status_code == 200, changed.text
            version = changed.json()["version"]
            versions.append(version)
        gone = await api.http.delete(FILE, headers=api.alice | if_match(version))
        assert gone.status_code == 204, gone.text

        listed = await api.http.get(f"{FILE}/versions", headers=api.alice)
        pruned = await api.http.get(f"{FILE}/versions/{versions[0]}", headers=api.alice)

    entries = listed.json()["entries"]
    assert [(e["operation"], e["deleted"]) for e in entries] == [
        ("delete_file", True),
        ("write_file", False),
        ("write_file", False),
    ]
    assert [e["version"] for e in entries[1:]] == versions[:-3:-1]
    assert pruned.status_code == 404, pruned.text
    assert pruned.json()["details"]["reason"] == "version_absent"
