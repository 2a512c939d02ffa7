"""The consent page of the OAuth flow: plain HTML forms, no script at all.

Served with the memory browser's security headers (strict CSP, no framing)
and never cached. Every value shown is escaped; the client's name and the
redirect URI's host are what the person judges the request by.
"""

import re
from collections.abc import Mapping
from html import escape
from urllib.parse import urlsplit

from starlette.responses import HTMLResponse

from app.features.oauth.domain import grant_text
from app.features.oauth.ports import ClientRecord
from app.server.ui.mount import SECURITY_HEADERS
from app.shared.identity import Grant

AUTHORIZE_PATH = "/oauth/authorize"
HEADERS = {**SECURITY_HEADERS, "Cache-Control": "no-store", "Pragma": "no-cache"}
CSP = "Content-Security-Policy"
ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+")


def _headers(redirect_uri: str | None) -> dict[str, str]:
    """The browser's headers; the form may also lead to the client's origin,
    where the answer redirects (browsers hold redirects to ``form-action``)."""
    if redirect_uri is None:
        return HEADERS
    parts = urlsplit(redirect_uri)
    origin = f"{parts.scheme}://{parts.netloc}"
    if not ORIGIN.fullmatch(origin):
        return HEADERS
    policy = HEADERS[CSP].replace("form-action 'self'", f"form-action 'self' {origin}")
    return {**HEADERS, CSP: policy}


def _page(
    title: str, body: str, *, status: int = 200, redirect_uri: str | None = None
) -> HTMLResponse:
    html = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{escape(title)} · Wenchang</title>
<link rel="stylesheet" href="/ui/css/app.css">
</head>
<body>
<main id="main"><section class="card narrow">
{body}
</section></main>
</body>
</html>
"""
    return HTMLResponse(html, status_code=status, headers=_headers(redirect_uri))


def _hidden(fields: Mapping[str, str]) -> str:
    return "\n".join(
        f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">'
        for name, value in fields.items()
    )


def _who(client: ClientRecord, redirect_uri: str) -> str:
    name = client.name or "An unnamed application"
    host = urlsplit(redirect_uri).hostname or "?"
    return (
        f'<h1>Connect <span id="client-name">{escape(name)}</span></h1>\n'
        '<p class="lead">It asks to use your Wenchang memory. You will be sent back '
        f'to <strong id="redirect-host">{escape(host)}</strong>.</p>'
    )


def _message(message: str | None) -> str:
    if message is None:
        return ""
    return f'<p class="hint" role="alert" id="message">{escape(message)}</p>'


def sign_in_page(
    client: ClientRecord,
    redirect_uri: str,
    fields: Mapping[str, str],
    *,
    message: str | None = None,
) -> HTMLResponse:
    body = f"""{_who(client, redirect_uri)}
{_message(message)}
<form method="post" action="{AUTHORIZE_PATH}">
{_hidden(fields)}
<div class="field"><label for="token">Your Wenchang token</label>
<input type="password" id="token" name="token" autocomplete="off" required>
<p class="hint">Signs you in for this page only; the application never sees it.
</p></div>
<button type="submit">Continue</button>
</form>"""
    return _page(
        "Connect an application",
        body,
        status=401 if message else 200,
        redirect_uri=redirect_uri,
    )


def choose_page(
    client: ClientRecord,
    redirect_uri: str,
    fields: Mapping[str, str],
    grants: Mapping[str, Grant],
    *,
    message: str | None = None,
) -> HTMLResponse:
    boxes = "\n".join(
        f'<div><input type="checkbox" id="grant-{index}" name="grant" '
        f'value="{escape(grant_text(scope, grant))}" checked> '
        f'<label for="grant-{index}">{escape(scope)}: {escape(grant.entity_id)} '
        f"({escape(grant.role)})</label></div>"
        for index, (scope, grant) in enumerate(sorted(grants.items()))
    )
    body = f"""{_who(client, redirect_uri)}
{_message(message)}
<form method="post" action="{AUTHORIZE_PATH}">
{_hidden(fields)}
<fieldset><legend>Memory it may use</legend>
{boxes}
</fieldset>
<p><input type="checkbox" id="read_only" name="read_only" value="on">
<label for="read_only">Read only: it may read but never change these</label></p>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>"""
    return _page(
        "Choose what to share",
        body,
        status=400 if message else 200,
        redirect_uri=redirect_uri,
    )


def error_page(code: str, description: str, *, status: int = 400) -> HTMLResponse:
    body = f"""<h1>This request cannot continue</h1>
<p>Error <code id="error-code">{escape(code)}</code>: {escape(description)}</p>
<p class="hint">Go back to the application and connect again.</p>"""
    return _page("Authorization refused", body, status=status)
