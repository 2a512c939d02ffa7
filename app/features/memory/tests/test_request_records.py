"""Idempotency records outlive the process that wrote them (SQLite, Redis): their
fingerprints keep one spelling, so a sweep after an upgrade still finds the
records of the files it erased, and a keyed retry after one still replays."""

from app.features.memory.ports.request_records import (
    UNNAMED,
    file_tag,
    record_fingerprint,
    sweep_tags,
)

TEA = "user/alice/notes/tea.md"
COFFEE = "user/alice/notes/coffee.md"
TEA_TAG = "@f6bdd36130b743d272ec4dbb2d780914"  # "@", 32 hex digits of SHA-256
COFFEE_TAG = "@96492eba8029aafbf311b0a6051876bc"


def test_a_file_tag_is_an_at_sign_and_32_hex_digits_of_the_keys_digest() -> None:
    assert file_tag(TEA) == TEA_TAG
    assert sweep_tags([TEA, COFFEE]) == [TEA_TAG, COFFEE_TAG, UNNAMED]


def test_a_fingerprint_joins_its_files_tags_between_operation_and_digest() -> None:
    assert record_fingerprint("rename_file", [TEA, COFFEE], "d1") == (
        f"rename_file:{TEA_TAG}{COFFEE_TAG}:d1"
    )
    assert record_fingerprint("run_memory_command", [], "d2") == (
        "run_memory_command:@*:d2"
    )
