from tenchi.health import health_route
from tenchi.openapi import swagger_ui_route
from tenchi.rate_limits import RATE_LIMITED
from tenchi.routes import route_group

from app.features.audit.routes import bindings as audit_bindings
from app.features.changes.routes import bindings as change_bindings
from app.features.memory.routes import bindings as memory_bindings
from app.features.memory_tool.routes import bindings as memory_tool_bindings
from app.features.search.routes import bindings as search_bindings
from app.features.webhooks.routes import bindings as webhook_bindings
from app.server.context import AppContext
from app.server.http.binding import bound
from app.server.http.index_route import index_route
from app.server.http.openapi_document import published_document, published_openapi_route
from app.shared.errors import backend_unavailable, invalid_argument, unauthorized

OPENAPI_TITLE = "Wenchang"
OPENAPI_VERSION = "0.1.0"
OPENAPI_DESCRIPTION = (
    "Durable, scoped markdown memory for AI agents. Every mutation is guarded by "
    "the file's version (ETag / If-Match); errors carry what a caller needs to "
    "recover in `details`."
)
OPENAPI_SECURITY = {"bearerAuth": {"type": "http", "scheme": "bearer"}}


async def storage_answers(context: AppContext) -> None:
    await context.storage.ping()


api_routes = route_group(
    index_route,
    bound(*memory_bindings),
    bound(*search_bindings),
    bound(*change_bindings),
    bound(*audit_bindings),
    bound(*webhook_bindings),
    bound(*memory_tool_bindings),
    prefix="/v1",
    errors=(unauthorized, RATE_LIMITED, backend_unavailable, invalid_argument),
)

published_openapi = published_document(
    api_routes,
    title=OPENAPI_TITLE,
    version=OPENAPI_VERSION,
    description=OPENAPI_DESCRIPTION,
    security=OPENAPI_SECURITY,
)

service_routes = route_group(
    published_openapi_route(published_openapi),
    swagger_ui_route(title=f"{OPENAPI_TITLE} API"),
    health_route(checks={"storage": storage_answers}),
)

routes = route_group(api_routes, service_routes)
"""The declared routes: the published contract, and what the app serves with
``WENCHANG_FAST_PATHS=off`` (``app.server.fast.passthrough`` serves their twins)."""
