"""The authorize endpoint: check the request, sign the person in, take their answer.

GET shows step one (a Wenchang token); its POST shows step two (which grants,
read only or not, allow or deny); that POST redirects to the client. Each form
carries ``csrf``, sealed by this server and bound to the request's parameters,
and step two a sealed ``session`` naming the signed-in token's grants: no
server-side session, no cookie, and a form built anywhere else is refused.
"""

from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.features.oauth.domain.seal import request_fingerprint, seal, unseal
from app.features.oauth.ports import OAuthContext
from app.features.oauth.use_cases.check_authorization import (
    PARAMETERS,
    AuthorizationRequest,
    Unredirectable,
    check_authorization,
)
from app.features.oauth.use_cases.grant_consent import grant_consent, refusal_redirect
from app.server.oauth.consent import choose_page, error_page, sign_in_page
from app.shared.errors.oauth import OAuthError
from app.shared.identity import Grant, Identity, Resolver

MAX_FORM_FIELDS = 64
FORGED = "The form was not one this server showed, or it expired; start again."


def _redirect(location: str) -> Response:
    return RedirectResponse(
        location, status_code=302, headers={"Cache-Control": "no-store"}
    )


def _cross_site(request: Request) -> bool:
    """A form posted from another origin: refused before anything is read.

    The sealed ``csrf`` field is what makes a form unforgeable; these headers
    refuse a cross-site post earlier. ``Sec-Fetch-Site`` is what browsers send
    today; ``Origin`` (``null`` under a strict referrer policy) for the rest.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return False
    own = f"{request.url.scheme}://{request.url.netloc}"
    parts = urlsplit(origin)
    return f"{parts.scheme}://{parts.netloc}" != own


class ConsentFlow:
    def __init__(
        self, context_for: Callable[[Request], OAuthContext], tokens: Resolver
    ) -> None:
        self._context_for = context_for
        self._tokens = tokens

    async def _checked(
        self, params: Mapping[str, str], context: OAuthContext
    ) -> AuthorizationRequest | Response:
        try:
            return await check_authorization(params, context)
        except Unredirectable as exc:
            return error_page(exc.code, exc.description)
        except OAuthError as exc:
            uri, state = params.get("redirect_uri", ""), params.get("state", "")
            return _redirect(refusal_redirect(uri, state, exc, context.issuer))

    def _fields(
        self, params: Mapping[str, str], context: OAuthContext, **sealed: object
    ) -> dict[str, str]:
        fingerprint = request_fingerprint(params)
        now = context.clock()
        fields = {
            **params,
            "csrf": seal(context.seal_key, {"fp": fingerprint}, now=now),
        }
        if sealed:
            payload = {"fp": fingerprint, **sealed}
            fields["session"] = seal(context.seal_key, payload, now=now)
        return fields

    async def show(self, request: Request) -> Response:
        context = self._context_for(request)
        params = {k: v for k, v in request.query_params.items() if k in PARAMETERS}
        checked = await self._checked(params, context)
        if isinstance(checked, Response):
            return checked
        return sign_in_page(
            checked.client, checked.redirect_uri, self._fields(params, context)
        )

    async def answer(self, request: Request) -> Response:
        if _cross_site(request):
            return error_page("invalid_request", FORGED, status=403)
        context = self._context_for(request)
        form = await request.form(max_fields=MAX_FORM_FIELDS)
        params = {
            k: v for k, v in form.items() if k in PARAMETERS and isinstance(v, str)
        }
        checked = await self._checked(params, context)
        if isinstance(checked, Response):
            return checked
        fingerprint = request_fingerprint(params)
        csrf = unseal(context.seal_key, str(form.get("csrf", "")), now=context.clock())
        if csrf is None or csrf.get("fp") != fingerprint:
            return error_page("invalid_request", FORGED, status=403)
        decision = form.get("decision")
        if decision is None:
            return self._sign_in(checked, params, str(form.get("token", "")), context)
        session = unseal(
            context.seal_key, str(form.get("session", "")), now=context.clock()
        )
        if session is None or session.get("fp") != fingerprint:
            return error_page("invalid_request", FORGED, status=403)
        if decision != "allow":
            denied = OAuthError("access_denied", "The person declined.")
            uri = refusal_redirect(
                checked.redirect_uri, checked.state, denied, context.issuer
            )
            return _redirect(uri)
        held = {s: Grant(e, r) for s, (e, r) in dict(session["grants"]).items()}
        chosen = [v for v in form.getlist("grant") if isinstance(v, str)]
        try:
            location = await grant_consent(
                checked, held, chosen, read_only="read_only" in form, context=context
            )
        except OAuthError as exc:
            fields = self._fields(params, context, grants=session["grants"])
            return choose_page(
                checked.client,
                checked.redirect_uri,
                fields,
                held,
                message=exc.description,
            )
        return _redirect(location)

    def _sign_in(
        self,
        checked: AuthorizationRequest,
        params: Mapping[str, str],
        token: str,
        context: OAuthContext,
    ) -> Response:
        # Only a Wenchang token signs a person in; an OAuth access token
        # never reaches this resolver.
        resolved = self._tokens.resolve(token.strip()) if token.strip() else None
        if not isinstance(resolved, Identity) or not resolved.grants:
            return sign_in_page(
                checked.client,
                checked.redirect_uri,
                self._fields(params, context),
                message="That token is not valid. Paste a Wenchang token (wct_…).",
            )
        grants = {s: [g.entity_id, g.role] for s, g in resolved.grants.items()}
        fields = self._fields(params, context, grants=grants)
        return choose_page(
            checked.client, checked.redirect_uri, fields, resolved.grants
        )
