"""A feature's declaration of one HTTP route: which operation serves which contract.

Features declare; `app/server/http/binding.py` binds (headers, retries, audit),
so a feature's routes hold no HTTP machinery of their own.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tenchi.contracts import Contract
from tenchi.responses import PresentedResponse


@dataclass(frozen=True, slots=True)
class Binding:
    """``operation`` serves ``contract``.

    ``present`` sees the request beside the result, for contracts with several
    responses (PUT answers 201 to a create and 200 to a replace);
    ``operation_id`` is the OpenAPI operationId, by default the contract's name.
    """

    contract: Contract[Any, Any]
    operation: Callable[..., Awaitable[object]]
    """A use case ``(request, context)``; the binder reads its annotations."""
    present: Callable[..., PresentedResponse] | None = None
    operation_id: str | None = None
