"""The index tag moves with every input of the index body, and nothing else."""

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


def test_held_tags_reads_lists_and_weak_forms() -> None:
    assert held_tags(None) == frozenset()
    assert held_tags('"a", W/"b" ,*') == {'"a"', '"b"', "*"}
