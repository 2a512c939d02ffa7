import pytest
from tenchi.errors import AppError

from app.features.audit.policy import entity_subject
from app.features.audit.ports import Subject
from app.features.memory.policy import locate_entity


@pytest.mark.parametrize(
    ("scope", "entity_id"),
    [("user", "a/b"), ("..", "alice"), ("user", ""), ("user", "a\\b")],
)
def test_an_audited_entity_is_refused_as_every_task_refuses_it(
    scope: str, entity_id: str
) -> None:
    """The audit task checks the names it is given as the memory tasks do."""
    with pytest.raises(AppError) as audited:
        entity_subject(scope, entity_id)
    with pytest.raises(AppError) as located:
        locate_entity(scope, entity_id)

    assert audited.value.code == located.value.code == "INVALID_ARGUMENT"
    assert audited.value.message == located.value.message
    assert audited.value.details == located.value.details


def test_an_audited_entity_is_its_scope_and_id() -> None:
    assert entity_subject("user", "alice") == Subject("user", "alice")
