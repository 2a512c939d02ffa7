"""The base of our ASGI middleware: it acts on HTTP requests, passes the rest on."""

from collections.abc import Awaitable

from starlette.types import ASGIApp, Receive, Scope, Send


class HttpMiddleware:
    """Lifespan and WebSocket scopes go straight to the app; ``handle`` sees HTTP."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # The awaitable of the layer that answers, handed back: no coroutine
        # of this dispatch's own per request (the caller awaits the result).
        if scope["type"] != "http":
            return self._app(scope, receive, send)
        return self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request; the default passes it on unchanged."""
        await self._app(scope, receive, send)
