"""The base of our ASGI middleware: it acts on HTTP requests, passes the rest on."""

from starlette.types import ASGIApp, Receive, Scope, Send


class HttpMiddleware:
    """Lifespan and WebSocket scopes go straight to the app; ``handle`` sees HTTP."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request; the default passes it on unchanged."""
        await self._app(scope, receive, send)
