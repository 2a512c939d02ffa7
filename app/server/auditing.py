"""The one wrapper every surface runs an operation call through to audit it.

HTTP routes reach it as ``context.audited`` (one place: the feature's route
binding), MCP tools and operator tasks through ``audited_use_case`` where the
composition root serves them; an operation added later is audited by being
served, with no code of its own.
"""

import functools
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tenchi.errors import AppError

from app.features.audit.domain import INTERNAL, Call, Outcome, call_events

if TYPE_CHECKING:
    from app.server.context import AppContext

AUDITED = "__wenchang_audited__"


async def record_call(
    context: "AppContext",
    operation: str,
    request: object,
    outcome: Outcome,
    *,
    durable: bool,
) -> None:
    identity = context.identity
    call = Call(
        operation=operation,
        surface=context.surface,
        actor=context.source,
        token_id=identity.token_id if identity is not None else None,
        request_id=context.request_id or uuid.uuid4().hex,
        grants=identity.grants if identity is not None else {},
    )
    events = call_events(call, request, outcome, at=context.clock())
    await context.audit.record(events, durable=durable)


async def audited[T](
    context: "AppContext",
    operation: str,
    request: object,
    run: Callable[[], Awaitable[T]],
    *,
    mutates: bool,
) -> T:
    """Run one call of ``operation`` and record its event(s), refusals included.

    ``request`` is the operation's request, or the raw fields of a call refused
    before its request could be built. A mutation that succeeded is recorded
    durably before this returns, so an acknowledged change always has its
    event; if that record fails, the caller gets BACKEND_UNAVAILABLE instead of
    an acknowledgement. Every other event may wait in the log's buffer.
    """
    try:
        result = await run()
    except AppError as exc:
        await record_call(context, operation, request, Outcome(exc.code), durable=False)
        raise
    except Exception:
        await record_call(context, operation, request, Outcome(INTERNAL), durable=False)
        raise
    outcome = Outcome("ok", result)
    await record_call(context, operation, request, outcome, durable=mutates)
    return result


def audited_use_case[T](
    operation: str, use_case: Callable[..., Awaitable[T]], *, mutates: bool
) -> Callable[..., Awaitable[T]]:
    """``use_case`` (given ``request`` and ``context``) with every call audited."""

    @functools.wraps(use_case)
    async def run(**inputs: Any) -> T:
        context: AppContext = inputs["context"]
        request = inputs.get("request")
        return await audited(
            context, operation, request, lambda: use_case(**inputs), mutates=mutates
        )

    return mark_audited(run, operation)


def mark_audited[F](function: F, operation: str) -> F:
    """Label a served callable as audited, for the test that every one is."""
    vars(function)[AUDITED] = operation
    return function


def audited_operation(function: object) -> str | None:
    """The operation a served callable records, or None if it records nothing."""
    found = getattr(function, AUDITED, None)
    return found if isinstance(found, str) else None
