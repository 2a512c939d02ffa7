"""The request-guard ports taken once for the SQLite and Redis stores.

A wait is whole seconds, at least one; a completion of a reservation the
store no longer holds fails naming the store.
"""

import pytest
from tenchi.idempotency import (
    IdempotencyDecision,
    IdempotencyReservation,
    IdempotencyStoreError,
)

from app.infra.request_guards import ReservationStore, retry_after


@pytest.mark.parametrize(
    ("seconds", "whole"), [(0.0, 1), (0.2, 1), (1.0, 1), (1.2, 2), (59.5, 60)]
)
def test_a_wait_is_whole_seconds_and_at_least_one(seconds: float, whole: int) -> None:
    assert retry_after(seconds) == whole


class ForgetfulStore(ReservationStore):
    """A store whose every reservation has lapsed by its completion."""

    async def claim(
        self, candidate: IdempotencyReservation, lease_seconds: float
    ) -> IdempotencyDecision:
        return candidate

    async def settle(self, reservation: IdempotencyReservation, result: bytes) -> bool:
        return False

    async def abandon(self, reservation: IdempotencyReservation) -> None:
        return None


async def test_completing_a_lapsed_reservation_fails_naming_the_store() -> None:
    store = ForgetfulStore()
    reservation = await store.reserve(
        namespace="http",
        scope="alice",
        key="k1",
        fingerprint="f",
        completed_ttl=60.0,
        reservation_ttl=30.0,
    )
    assert isinstance(reservation, IdempotencyReservation)

    with pytest.raises(IdempotencyStoreError) as raised:
        await store.complete(reservation, result_json=b"{}")

    assert str(raised.value) == "ForgetfulStore: reservation is no longer active"
