"""The committed OpenAPI document matches the code."""

from tenchi.cli import main


def test_openapi_snapshot_is_current() -> None:
    """`openapi.json` is what `tenchi openapi` generates now."""
    assert main(["openapi", "--check", "openapi.json"]) == 0
