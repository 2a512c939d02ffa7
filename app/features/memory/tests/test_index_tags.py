"""The index tag moves with every input of the index body, and nothing else."""

import hashlib
from datetime import UTC, datetime, timedelta

from app.features.memory.domain.index_tags import held_tags, index_tag

ENTITIES = [("user/alice/", "m1"), ("team/t-1/", "m2")]


def tag(entities: list[tuple[str, str]] = ENTITIES, **limits: object) -> str:
    settings: dict[str, object] = {"priority": ("team",), "max_bytes": 100} | limits
    return index_tag(entities, **settings)  # type: ignore[arg-type]


def test_the_same_inputs_give_the_same_strong_tag() -> None:
    assert tag() == tag()
    assert tag().startswith('"') and tag().endswith('"')


def test_every_input_moves_the_tag() -> None:
    changed = [
        tag([("user/alice/", "m9"), ("team/t-1/", "m2")]),
        tag([("user/alice/", "m1")]),
        tag([("user/bob/", "m1"), ("team/t-1/", "m2")]),
        tag(priority=()),
        tag(max_bytes=101),
    ]
    assert tag() not in changed
    assert len(set(changed)) == len(changed)


def test_the_next_expiry_and_the_owners_view_move_the_tag() -> None:
    """Either one changes the body, so each is a part; without them, as before."""
    soon = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    plain = index_tag(ENTITIES, priority=("team",), max_bytes=100)
    tags = [
        plain,
        tag(next_expiry=soon),
        tag(next_expiry=soon + timedelta(seconds=1)),
        tag(with_expired=True),
        tag(next_expiry=soon, with_expired=True),
    ]
    assert tags[0] == tag(next_expiry=None, with_expired=False)
    assert len(set(tags)) == len(tags)


def test_the_tag_is_a_digest_of_its_parts_in_a_fixed_order() -> None:
    """Pinned: each part (format, priority, budget, markers, expiry, view) in order."""
    material = (
        '["index-1",["team"],100,[["user/alice/","m1"],["team/t-1/","m2"]],'
        '"2026-03-01T12:00:00Z","with-expired"]'
    )
    digest = hashlib.sha256(material.encode()).hexdigest()[:40]
    soon = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

    assert tag(next_expiry=soon, with_expired=True) == f'"ix-{digest}"'


def test_held_tags_reads_lists_and_weak_forms() -> None:
    assert held_tags(None) == frozenset()
    assert held_tags('"a", W/"b" ,*') == {'"a"', '"b"', "*"}
