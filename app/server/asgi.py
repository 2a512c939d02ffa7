"""The ASGI application: the memory API over HTTP, composed from settings.

Run it with ``wenchang serve`` (or ``uvicorn app.server.asgi:app``).
"""

from starlette.applications import Starlette
from tenchi.server import create_app

from app.infra.token_file import TokenFileResolver
from app.server.hooks import create_bearer_hook
from app.server.routes import routes
from app.server.runtime import create_context, create_lifespan
from app.server.settings import Settings, load_settings
from app.shared.identity import Resolver


def build_app(settings: Settings, *, resolver: Resolver | None = None) -> Starlette:
    return create_app(
        routes=routes,
        context_factory=create_context,
        lifespan=create_lifespan(settings),
        hooks=(
            create_bearer_hook(resolver or TokenFileResolver(settings.tokens_path)),
        ),
    )


def __getattr__(name: str) -> Starlette:
    # Built on first access so importing this module (tests, tooling) reads no
    # settings and touches no files.
    if name == "app":
        return build_app(load_settings())
    raise AttributeError(name)
