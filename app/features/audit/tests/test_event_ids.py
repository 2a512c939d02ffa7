"""An event id is the microsecond it was made, 14 hex digits, then 72 random bits."""

from ..domain.marks import new_event_id


def test_an_id_starts_with_the_microsecond_it_was_made_in_hex() -> None:
    made_ns = 1_764_662_400_123_456_789

    made = [new_event_id(made_ns) for _ in range(50)]

    assert {i[:14] for i in made} == {f"{made_ns // 1000:014x}"}
    assert all(len(i) == 32 and i == i.lower() for i in made)
    assert len({i[14:] for i in made}) == 50


def test_the_first_microsecond_is_fourteen_zeros() -> None:
    assert new_event_id(999)[:14] == "0" * 14
