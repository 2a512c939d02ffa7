"""The advice a transient refusal ends with, which agents act on, stays accurate.

A retry of an attempt that already landed is a version conflict; with the same
Idempotency-Key it may instead get that attempt's result (the recorded answer,
or on GCS its own landed write), so the advice must not promise a conflict.
"""

from app.shared.errors import GUIDANCE, Category, outcome_unknown_error


def test_transient_advice_names_both_answers_a_retry_of_a_landed_attempt_gets() -> None:
    assert GUIDANCE[Category.TRANSIENT] == (
        "Retrying is appropriate. Version-guarded calls are safe to retry: an "
        "attempt that already landed comes back as a version conflict, though a "
        "retry with the same Idempotency-Key may get that attempt's result instead."
    )


def test_an_outcome_unknown_ends_with_the_transient_advice() -> None:
    message = str(outcome_unknown_error())

    assert message.startswith("The storage backend did not confirm the write")
    assert message.endswith(GUIDANCE[Category.TRANSIENT])
