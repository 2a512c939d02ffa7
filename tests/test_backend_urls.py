"""The backend URL forms each port accepts (``app/infra/backend_urls.py``).

A scheme alone names no backend; a URL no form accepts is refused listing
the forms a setting takes (test-only forms left out).
"""

import pytest

from app.infra.backend_urls import (
    AUDIT_URLS,
    REQUEST_STORE_URLS,
    STORAGE_URLS,
    Backend,
    UrlForm,
    backend_of,
)


@pytest.mark.parametrize("url", ["sqlite:///", "file://", "gcs://"])
def test_a_scheme_alone_names_no_backend(url: str) -> None:
    with pytest.raises(ValueError, match=r"^use "):
        backend_of(url, STORAGE_URLS)


def test_a_scheme_with_a_path_names_its_backend() -> None:
    assert backend_of("sqlite:///w.db", STORAGE_URLS) is Backend.SQLITE
    assert backend_of("file://d", STORAGE_URLS) is Backend.FILE
    assert backend_of("rediss://h", REQUEST_STORE_URLS) is Backend.REDIS


@pytest.mark.parametrize(
    ("forms", "message"),
    [
        (
            STORAGE_URLS,
            "use sqlite:///path/to.db, file:///path/to/dir, "
            "gcs://bucket[/prefix] or memory://",
        ),
        (REQUEST_STORE_URLS, "use memory, sqlite:///path/to.db or redis://host:6379/0"),
        (AUDIT_URLS, "use sqlite:///path/to.db, file:///path/to/dir, stdout or none"),
    ],
)
def test_an_unknown_url_is_refused_listing_the_forms(
    forms: tuple[UrlForm, ...], message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        backend_of("ftp://elsewhere", forms)

    assert str(raised.value) == message
