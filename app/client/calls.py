"""How the typed client sends a call: reads, and guarded, keyed mutations.

``ContractCalls`` wraps Tenchi's contract-driven ``Client``: reads go through
``_read``, mutations through ``_mutate``, which sends the ``If-None-Match: *`` /
``If-Match: "<version>"`` precondition derived from ``expected_version`` and a
fresh ``Idempotency-Key`` that every retry of that call reuses, so a retry
whose first attempt landed gets the first result back (exactly once). Path
parameters are checked first (``app.client.segments``), a body by the
contract's own request model, and every failure becomes a ``WenchangError``
(``app.client.translate``).
"""

from collections.abc import Mapping
from typing import Any

from tenchi.client import Client
from tenchi.contracts import Contract
from tenchi.retries import RetryPolicy

from app.client.preconditions import new_key, precondition
from app.client.segments import file_path, require_url_segments
from app.client.translate import translate_errors


class ContractCalls:
    """One contract call at a time, retried as its method allows."""

    def __init__(self, client: Client, *, retry: RetryPolicy | None = None) -> None:
        self._client = client
        self._retry = retry
        self._retry_writes = retry if retry and retry.allow_unsafe_methods else None

    async def _read[T](
        self,
        contract: Contract[T, Any],
        query: Mapping[str, str] | None = None,
        **path: str | None,
    ) -> T:
        with translate_errors():
            call: dict[str, object] = (
                {"params": require_url_segments(**path)} if path else {}
            )
            if query is not None:
                call["query"] = query
            return await self._client.call(contract, retry=self._retry, **call)

    async def _mutate[T](
        self,
        contract: Contract[T, Any],
        where: tuple[str, str, str],
        expected_version: str | None,
        body: Mapping[str, object] | None = None,
    ) -> T:
        """One mutation of the file at ``where``, at ``expected_version``."""
        with translate_errors():
            call: dict[str, object] = {"params": file_path(*where)}
            if body is not None:
                call["request"] = body
            # One key per call, the same on each of its retries.
            headers = precondition(expected_version) | {"idempotency_key": new_key()}
            return await self._client.call(
                contract, headers=headers, retry=self._retry_writes, **call
            )
