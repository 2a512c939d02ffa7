"""A directory view's sizes: bytes, then K, M, G in steps of 1024, one decimal
when the size is not whole in its unit."""

import pytest

from app.features.memory_tool.domain.texts import file_size


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0B"),
        (1, "1B"),
        (1023, "1023B"),
        (1024, "1K"),
        (1536, "1.5K"),
        (1024**2 - 1, "1024.0K"),
        (3 * 1024**2, "3M"),
        (5 * 1024**3, "5G"),
        (1024**4, "1024G"),
    ],
)
def test_a_size_is_shown_in_the_largest_unit_it_fills(size: int, shown: str) -> None:
    assert file_size(size) == shown
