"""Cursors: opaque, unpadded, and read back only for the listing they name."""

from app.features.memory.domain import decode_cursor, encode_cursor

KEY = b"cursor-key"


def test_a_cursor_carries_no_base64_padding_and_reads_back() -> None:
    for position in ("a", "ab", "abc", "user/alice/notes/tea"):
        cursor = encode_cursor(KEY, "listing", position)
        assert "=" not in cursor
        assert decode_cursor(KEY, "listing", cursor) == position
        assert decode_cursor(KEY, "other", cursor) is None


def test_a_cursor_without_its_tag_or_with_a_foreign_character_is_not_issued() -> None:
    cursor = encode_cursor(KEY, "listing", "a.b")
    body, _, tag = cursor.partition(".")
    assert decode_cursor(KEY, "listing", body) is None
    assert decode_cursor(KEY, "listing", f"{body}.{tag}.x") is None
    assert decode_cursor(KEY, "listing", f"{body}é.{tag}") is None


def test_a_body_ending_in_x_reads_back() -> None:
    cursor = encode_cursor(KEY, "listing", "a/W")  # its body is "YS9X"
    assert cursor.startswith("YS9X.")
    assert decode_cursor(KEY, "listing", cursor) == "a/W"


def test_dots_after_the_body_or_a_foreign_character_in_the_tag_are_not_issued() -> None:
    body, _, tag = encode_cursor(KEY, "listing", "abc").partition(".")
    assert decode_cursor(KEY, "listing", f"{body}....{tag}") is None
    assert decode_cursor(KEY, "listing", f"{body}.é") is None


def test_only_the_issued_spelling_of_a_cursor_reads_back() -> None:
    cursor = encode_cursor(KEY, "listing", "abc")  # its body is "YWJj"
    body, _, tag = cursor.partition(".")
    assert body == "YWJj"
    spellings = [
        f"{body}=.{tag}",  # padding base64 forgives
        f"{body}===.{tag}",
        f"YW Jj.{tag}",  # a character outside the alphabet, skipped when decoded
        f"YW!Jj.{tag}",
    ]
    for spelling in spellings:
        assert decode_cursor(KEY, "listing", spelling) is None, spelling
    unused_bits = encode_cursor(KEY, "listing", "a")  # "YQ": "YR" decodes alike
    assert unused_bits.startswith("YQ.")
    assert decode_cursor(KEY, "listing", "YR" + unused_bits[2:]) is None
    assert decode_cursor(KEY, "listing", cursor) == "abc"
