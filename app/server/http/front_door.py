"""The one ASGI layer in front of every HTTP request: its id, the ``%2F`` and
duplicate-credential guards, the error envelope, and the answers no contract
can give (a stream).

Each request needs all three, in this order: the id first (everything after
names it), then the envelope around everything that can refuse, the guard
included. One layer does them because a layer of its own costs every request
a coroutine and a frame or two (``request_log``, ``encoded_slash_guard`` and
``error_envelope`` each keep their rule). For the same reason the streamed
answers (``change_stream``, ``markdown_zip``) are not layers: this one hands
a request to the answer for its path when that answer takes it.
"""

from collections.abc import Callable, Sequence
from typing import Protocol

from starlette.types import ASGIApp, Receive, Scope, Send

from app.server.http.duplicate_key_guard import duplicate_key_refusal
from app.server.http.encoded_slash_guard import encoded_slash_refusal
from app.server.http.error_envelope import enveloped
from app.server.http.hooks import duplicate_credentials_refusal
from app.server.http.middleware import HttpMiddleware
from app.server.http.request_log import current_request_id, identified
from app.shared.identity import Resolver

OWN_ERROR_BODIES = ("/oauth/", "/.well-known/oauth-")
"""Paths that answer refusals in RFC 6749's shape (or as the consent page),
which OAuth clients parse: never rewritten into the envelope."""


class OwnAnswer(Protocol):
    """An answer served in front of the routes, for requests to its ``path``."""

    path: str

    def answers(self, scope: Scope) -> bool:
        """Whether this request to ``path`` is its to answer (else the routes')."""
        ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...


class FrontDoor(HttpMiddleware):
    def __init__(
        self,
        app: ASGIApp,
        *,
        resolver: Resolver,
        on_refusal: Callable[[str], None] | None = None,
        answers: Sequence[OwnAnswer] = (),
    ) -> None:
        super().__init__(app)
        self._resolver = resolver
        self._on_refusal = on_refusal
        self._answers = {answer.path: answer for answer in answers}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The header names, listed once: the id and both duplicate guards
        # search them in C instead of each walking the headers in Python.
        names = [item[0] for item in scope["headers"]]
        scope, request_id = identified(scope, names)
        token = current_request_id.set(request_id)
        try:
            if not scope["path"].startswith(OWN_ERROR_BODIES):
                send = enveloped(scope, send, self._on_refusal)
            refused = (
                duplicate_credentials_refusal(scope, names)
                or encoded_slash_refusal(scope, self._resolver)
                or duplicate_key_refusal(scope, names, self._resolver)
            )
            app: ASGIApp = self._app
            answer = self._answers.get(scope["path"])
            if answer is not None and answer.answers(scope):
                app = answer
            await (refused or app)(scope, receive, send)
        finally:
            current_request_id.reset(token)
