"""What a ``gcs://`` URL names, and how a wrong one is refused (no emulator)."""

import pytest

from app.infra.gcs.location import GcsLocation, parse_gcs_url


@pytest.mark.parametrize(
    ("url", "location"),
    [
        ("gcs://b", GcsLocation("b")),
        ("gcs://b/", GcsLocation("b")),
        ("gcs://b/Xwork/", GcsLocation("b", "Xwork/")),
        ("gcs://b//deep/er//", GcsLocation("b", "deep/er/")),
        ("gcs://b?timeout=600&attempts=1", GcsLocation("b", "", 600.0, 1)),
        ("gcs://b?timeout=0.5&attempts=7", GcsLocation("b", "", 0.5, 7)),
    ],
)
def test_a_url_names_bucket_prefix_deadline_and_attempts(
    url: str, location: GcsLocation
) -> None:
    assert parse_gcs_url(url) == location


NEEDS_BUCKET = "gcs:// needs a bucket name, e.g. gcs://my-bucket/wenchang"
ONLY = "gcs:// takes only ?timeout=SECONDS&attempts=N (N ≥ 1)"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("gs://b", NEEDS_BUCKET),
        ("gcs:///prefix", NEEDS_BUCKET),
        (
            "gcs://b?timeout=600.001",
            "gcs:// option timeout='600.001' must be a number in (0, 600]",
        ),
        (
            "gcs://b?timeout=601",
            "gcs:// option timeout='601' must be a number in (0, 600]",
        ),
        ("gcs://b?timeout=0", "gcs:// option timeout='0' must be a number in (0, 600]"),
        (
            "gcs://b?attempts=x",
            "gcs:// option attempts='x' must be a number in (0, 600]",
        ),
        ("gcs://b?attempts=0.5", ONLY),
        ("gcs://b?retries=2", ONLY),
    ],
)
def test_a_wrong_url_is_refused_saying_how_to_spell_it(url: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_gcs_url(url)
    assert str(refused.value) == message
