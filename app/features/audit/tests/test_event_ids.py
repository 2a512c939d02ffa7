"""An event id is the microsecond it was made, 14 hex digits, then 72 bits that
no other id of this process or (but for chance) of another one repeats."""

import os

from ..domain.marks import new_event_id


def test_an_id_starts_with_the_microsecond_it_was_made_in_hex() -> None:
    made_ns = 1_764_662_400_123_456_789

    made = [new_event_id(made_ns) for _ in range(50)]

    assert {i[:14] for i in made} == {f"{made_ns // 1000:014x}"}
    assert all(len(i) == 32 and i == i.lower() for i in made)
    assert len({i[14:] for i in made}) == 50


def test_the_first_microsecond_is_fourteen_zeros() -> None:
    assert new_event_id(999)[:14] == "0" * 14


def test_a_forked_child_draws_ids_of_its_own() -> None:
    """A worker forked from a server never repeats the ids its parent makes."""
    made_ns = 1_764_662_400_123_456_789
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side
        os.write(write, "".join(new_event_id(made_ns) for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as pipe:
        theirs = pipe.read()
    ours = [new_event_id(made_ns) for _ in range(3)]

    children = {theirs[at : at + 32] for at in range(0, 96, 32)}
    assert len(children) == 3
    assert not children & set(ours)
