"""The OAuth 2.1 endpoints: discovery, registration, authorize + consent, token, revoke.

Wenchang is its own authorization server for its MCP endpoint. Answers of the
JSON endpoints are RFC 6749 error bodies on refusal and are never cached; the
consent page is served like the memory browser (see ``oauth_consent``).
"""

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping

from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.features.audit.domain.marks import new_event_id
from app.features.audit.ports import AuditEvent
from app.features.oauth.domain import SCOPES, client_token_id
from app.features.oauth.ports import ClientDocuments, OAuthContext, OAuthStore
from app.features.oauth.use_cases.exchange_code import exchange_code
from app.features.oauth.use_cases.refresh_tokens import refresh_tokens
from app.features.oauth.use_cases.register_client import register_client
from app.features.oauth.use_cases.revoke_token import revoke_token
from app.server.context import AppContext
from app.server.http.request_log import current_request_id
from app.server.oauth.consent import AUTHORIZE_PATH
from app.server.oauth.consent_flow import ConsentFlow
from app.server.settings import Settings
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant, Resolver

RESOURCE_METADATA = "/.well-known/oauth-protected-resource"
SERVER_METADATA = "/.well-known/oauth-authorization-server"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
MAX_FORM_FIELDS = 32


def oauth_refusal(error: OAuthError) -> JSONResponse:
    status = 401 if error.code == "invalid_client" else 400
    return JSONResponse(error.body(), status_code=status, headers=NO_STORE)


def challenge(base: str, *, invalid: bool) -> str:
    """The ``WWW-Authenticate`` value of a 401 on ``/mcp``: where to find the
    authorization server, and what to ask it for."""
    error = 'error="invalid_token", ' if invalid else ""
    return (
        f'Bearer {error}resource_metadata="{base}{RESOURCE_METADATA}/mcp", '
        f'scope="{" ".join(SCOPES)}"'
    )


def base_url(settings: Settings, request: Request) -> str:
    """``WENCHANG_PUBLIC_URL``, else the scheme and host the request reached."""
    return settings.public_url or f"{request.url.scheme}://{request.url.netloc}"


class OAuthEndpoints:
    def __init__(
        self,
        settings: Settings,
        *,
        store: OAuthStore,
        documents: ClientDocuments,
        tokens: Resolver,
        running: Callable[[], AppContext],
    ) -> None:
        self._settings = settings
        self._store = store
        self._documents = documents
        self._running = running
        self._consent = ConsentFlow(self.context, tokens)

    def context(self, request: Request) -> OAuthContext:
        running = self._running()
        key = hmac.new(running.cursor_key, b"wenchang-oauth-consent", hashlib.sha256)
        return OAuthContext(
            store=self._store,
            issuer=base_url(self._settings, request),
            access_ttl=self._settings.oauth_access_ttl,
            unused_client_ttl=self._settings.oauth_unused_client_ttl,
            events=self._record,
            documents=self._documents,
            seal_key=key.digest(),
        )

    async def _record(
        self, operation: str, client_id: str, grants: Mapping[str, Grant]
    ) -> None:
        running = self._running()
        at = running.clock()
        events = [
            AuditEvent(
                id=new_event_id(),
                at=at,
                request_id=current_request_id.get() or "",
                surface="http",
                actor="oauth",
                token_id=client_token_id(client_id),
                operation=operation,
                scope=scope,
                entity_id=grant.entity_id,
                area=None,
                name=None,
                outcome="ok",
                version=None,
            )
            for scope, grant in sorted(grants.items())
        ]
        await running.audit.record(events, durable=True)

    def routes(self) -> list[Route]:
        return [
            Route(RESOURCE_METADATA, self.resource_metadata, methods=["GET"]),
            Route(f"{RESOURCE_METADATA}/mcp", self.resource_metadata, methods=["GET"]),
            Route(SERVER_METADATA, self.server_metadata, methods=["GET"]),
            Route(REGISTER_PATH, self.register, methods=["POST"]),
            Route(AUTHORIZE_PATH, self._consent.show, methods=["GET"]),
            Route(AUTHORIZE_PATH, self._consent.answer, methods=["POST"]),
            Route(TOKEN_PATH, self.token, methods=["POST"]),
            Route(REVOKE_PATH, self.revoke, methods=["POST"]),
        ]

    async def resource_metadata(self, request: Request) -> Response:
        base = base_url(self._settings, request)
        metadata = ProtectedResourceMetadata.model_validate(
            {
                "resource": f"{base}/mcp",
                "authorization_servers": [base],
                "scopes_supported": list(SCOPES),
                "resource_name": "Wenchang memory",
            }
        )
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    async def server_metadata(self, request: Request) -> Response:
        base = base_url(self._settings, request)
        metadata = OAuthMetadata.model_validate(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}{AUTHORIZE_PATH}",
                "token_endpoint": f"{base}{TOKEN_PATH}",
                "registration_endpoint": f"{base}{REGISTER_PATH}",
                "revocation_endpoint": f"{base}{REVOKE_PATH}",
                "scopes_supported": list(SCOPES),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_methods_supported": ["none"],
                "revocation_endpoint_auth_methods_supported": ["none"],
                "code_challenge_methods_supported": ["S256"],
                "client_id_metadata_document_supported": True,
                "authorization_response_iss_parameter_supported": True,
            }
        )
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    async def register(self, request: Request) -> Response:
        try:
            metadata: object = json.loads(await request.body())
        except ValueError:
            metadata = None
        if not isinstance(metadata, dict):
            return oauth_refusal(
                OAuthError("invalid_client_metadata", "Send a JSON object.")
            )
        try:
            answer = await register_client(metadata, self.context(request))  # pyright: ignore[reportUnknownArgumentType]
        except OAuthError as exc:
            return oauth_refusal(exc)
        return JSONResponse(answer, status_code=201, headers=NO_STORE)

    async def _form(self, request: Request) -> dict[str, str]:
        form = await request.form(max_fields=MAX_FORM_FIELDS)
        return {name: value for name, value in form.items() if isinstance(value, str)}

    async def token(self, request: Request) -> Response:
        form = await self._form(request)
        context = self.context(request)
        grant_type = form.get("grant_type")
        try:
            if grant_type == "authorization_code":
                answer = await exchange_code(form, context)
            elif grant_type == "refresh_token":
                answer = await refresh_tokens(form, context)
            else:
                raise OAuthError(
                    "unsupported_grant_type",
                    "grant_type must be authorization_code or refresh_token.",
                )
        except OAuthError as exc:
            return oauth_refusal(exc)
        return JSONResponse(answer, headers=NO_STORE)

    async def revoke(self, request: Request) -> Response:
        form = await self._form(request)
        try:
            await revoke_token(form, self.context(request))
        except OAuthError as exc:
            return oauth_refusal(exc)
        return Response(status_code=200, headers=NO_STORE)
