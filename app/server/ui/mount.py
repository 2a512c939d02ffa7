"""Serves the memory browser's static files at /ui/ with its security headers.

The pages hold no rule of their own: every read and change goes through the
JSON API under /v1 with the bearer token the person pasted, which lives in the
tab's sessionStorage. No cookie is ever set, so no request can ride on ambient
credentials from another origin, and the API answers no cross-origin preflight.
"""

from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UI_PATH = "/ui"
STATIC_DIRECTORY = Path(__file__).parent / "static"

# Scripts and styles come only from this origin (no inline code, no eval);
# Trusted Types confine HTML parsing to DOMPurify's policy; nothing may frame
# the page, and images from elsewhere (tracking pixels in memory content)
# never load.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types dompurify",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    # Revalidate every time so an upgraded server never runs stale scripts.
    "Cache-Control": "no-cache",
}


class UiFiles(StaticFiles):
    """Static files whose refusals (404, 405) carry the UI's headers too."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            return PlainTextResponse(exc.detail, status_code=exc.status_code)


class SecurityHeaders:
    """Adds the browser's security headers to every response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self._app(scope, receive, send_with_headers)


async def to_ui_root(_: object) -> RedirectResponse:
    return RedirectResponse(f"{UI_PATH}/", status_code=308)


def ui_routes() -> list[BaseRoute]:
    """``/ui`` (redirects to ``/ui/``) and the static pages below it."""
    static = UiFiles(directory=STATIC_DIRECTORY, html=True)
    return [
        Route(UI_PATH, to_ui_root, methods=["GET", "HEAD"]),
        Mount(UI_PATH, app=SecurityHeaders(static), name="ui"),
    ]
