"""HTTP requests refused before their operation ran, recorded as audit events.

Tenchi answers a request whose path, query, headers or body fail the contract
(422 ``VALIDATION_ERROR``), a body over the ceiling (413 ``REQUEST_TOO_LARGE``)
or of the wrong media type (415 ``UNSUPPORTED_MEDIA_TYPE``) before any use case
runs, and the bearer hook refuses a spent rate limit (429 ``RATE_LIMITED``):
the audit wrapper never sees them. This route observer records each as one
refused call of the route's operation, attributed to the token that sent it,
at the location its path names. A request without a token that resolves (401)
is no event: it belongs to nobody's memory, and recording it would let anyone
without a token grow the log.
"""

from collections.abc import Callable, Iterable
from urllib.parse import unquote

from tenchi.errors import AppError
from tenchi.routes import Route
from tenchi.server import RequestOutcome

from app.features.audit.domain import Outcome
from app.server.auditing import audited_operation, record_later
from app.server.context import AppContext
from app.server.http.hooks import authenticate
from app.shared.identity import Resolver

PRE_OPERATION = {
    ("framework", 422): "VALIDATION_ERROR",
    ("framework", 413): "REQUEST_TOO_LARGE",
    ("framework", 415): "UNSUPPORTED_MEDIA_TYPE",
    ("app", 429): "RATE_LIMITED",
}
"""(who answered, status) of a refusal that comes before the operation runs."""


def path_fields(template: str, path: str) -> dict[str, str]:
    """The path parameters of ``path``, a request for the route ``template``."""
    names = template.strip("/").split("/")
    values = path.strip("/").split("/")[-len(names) :]
    return {
        name[1:-1]: unquote(value)
        for name, value in zip(names, values, strict=False)
        if name.startswith("{") and name.endswith("}")
    }


class RefusalAudit:
    """Records the pre-operation refusals of ``routes`` in the running app's log."""

    def __init__(
        self,
        routes: Iterable[Route],
        resolver: Resolver,
        context: Callable[[], AppContext],
    ) -> None:
        self._operations = {
            r.contract.name: (operation, r.contract.path)
            for r in routes
            if (operation := audited_operation(r.use_case)) is not None
        }
        self._resolver = resolver
        self._context = context

    def __call__(self, outcome: RequestOutcome) -> None:
        # Synchronous: Tenchi awaits an observer only when it returns an
        # awaitable, and every request it serves passes here; a refusal's
        # event waits for the log's next write (``record_later``).
        code = PRE_OPERATION.get((outcome.error_source or "", outcome.status_code))
        request = outcome.request
        served = self._operations.get(request.contract.name)
        if code is None or served is None:
            return
        try:
            identity = authenticate(
                self._resolver, request.headers.get("authorization", "")
            )
        except AppError:
            return
        operation, template = served
        context = self._context().for_call(identity, request_id=request.request_id)
        fields = path_fields(template, request.path)
        record_later(context, operation, fields, Outcome(code))
