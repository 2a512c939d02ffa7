from dataclasses import replace
from datetime import UTC, datetime

import pytest
from tenchi.errors import AppError

from app.features.audit.domain.pages import encode_position
from app.features.audit.policy import (
    AuditPolicy,
    audit_subjects,
    entity_subject,
    require_position,
)
from app.features.audit.ports import AuditSelection, Position, Subject
from app.features.memory.policy import locate_entity
from app.shared.identity import Grant, Identity


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


def _refusal(identity: Identity, scope: str | None) -> AppError:
    with pytest.raises(AppError) as refused:
        audit_subjects(identity, scope, AuditPolicy())
    return refused.value


VIEWER = Identity({"user": Grant("alice", "viewer"), "project": Grant("p-1", "member")})


@pytest.mark.parametrize(
    ("identity", "scope", "named"),
    [
        (VIEWER, "user", "user"),
        (VIEWER, None, "project"),  # no scope asked: the first granted one
        (Identity({}), None, ""),
    ],
)
def test_a_caller_without_an_audit_role_is_refused_naming_the_scope(
    identity: Identity, scope: str | None, named: str
) -> None:
    refused = _refusal(identity, scope)

    assert (refused.code, refused.details["reason"]) == (
        "RESTRICTED_SCOPE",
        "role_required",
    )
    assert refused.details["scope"] == named
    assert refused.message.startswith(
        f"Reading the audit log of scope {named} needs one of the roles admin, "
        "owner, and the caller's grant has none of them."
    )


def test_a_cursor_of_other_filters_is_refused_with_its_sentence() -> None:
    query = AuditSelection(subjects=(Subject("user", "alice"),))
    cursor = encode_position(b"k", query, Position(at=datetime.now(UTC), id="e1"))

    with pytest.raises(AppError) as refused:
        require_position(b"k", replace(query, area="notes"), cursor)

    assert (refused.value.code, refused.value.details["argument"]) == (
        "INVALID_ARGUMENT",
        "cursor",
    )
    assert refused.value.message.startswith(
        "Argument cursor is invalid: cursor was not issued for these filters; pass "
        "the next_cursor returned with the same filters, or omit it to start over."
    )
