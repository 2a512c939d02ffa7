"""The ``wenchang`` command: serve, mcp, config, openapi, tokens and webhooks."""

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from app.infra.tokens.token_file import (
    create_first_token,
    create_token,
    read_token_file,
    revoke_token,
)
from app.server.cli.config_report import effective_settings, unknown_variable_warnings
from app.server.cli.serve_workers import require_shared_storage, run_workers
from app.server.cli.webhooks import add_webhook_arguments, run_webhook
from app.server.log_config import configured_logging
from app.server.mcp.telemetry import log_tool_call
from app.server.oauth.cli import oauth_client_lines, revoke_oauth_client
from app.server.otel import telemetry_from_environment
from app.server.settings import Settings, SettingsError, load_settings
from app.shared.identity import parse_grants

MAX_EXPIRY_DAYS = 36_500


def _days(text: str) -> float:
    # Zero would store no expiry at all, a negative value an expired token, and a
    # huge one overflows the expiry date.
    try:
        days = float(text)
    except ValueError:
        days = 0.0
    if not 0 < days <= MAX_EXPIRY_DAYS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of days; use a positive number up to "
            f"{MAX_EXPIRY_DAYS}, e.g. 30 or 0.5"
        )
    return days


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wenchang", description="Durable, scoped memory for AI agents."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP API and MCP endpoint")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--storage", help="storage URL, e.g. sqlite:///./wenchang.db")
    serve.add_argument("--workers", type=int, default=1, help="server processes")
    commands.add_parser(
        "mcp", help="serve the memory tools over MCP stdio as WENCHANG_LOCAL_IDENTITY"
    )
    commands.add_parser(
        "config", help="print the effective settings (secrets masked); exit 2 if bad"
    )
    commands.add_parser("openapi", help="print the published OpenAPI document")
    token = commands.add_parser("token", help="manage bearer tokens")
    actions = token.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="add a token and print it once")
    create.add_argument(
        "--grant",
        action="append",
        required=True,
        metavar="SCOPE=ENTITY:ROLE",
        help="repeat for each scope, e.g. --grant user=alice:owner",
    )
    create.add_argument("--label", help="recorded in `sources` of every write")
    create.add_argument("--expires", type=_days, metavar="DAYS")
    actions.add_parser("list", help="show tokens (never their secrets)")
    revoke = actions.add_parser("revoke", help="remove a token by id")
    revoke.add_argument("token_id", help="a token id, or an OAuth client id")
    add_webhook_arguments(
        commands.add_parser("webhook", help="manage an entity's webhooks")
    )
    return parser


def client_snippet(url: str, token: str) -> str:
    config = {
        "mcpServers": {
            "wenchang": {
                "type": "http",
                "url": f"{url}/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    return (
        f"MCP client configuration (streamable HTTP):\n  {json.dumps(config)}\n"
        f'HTTP:\n  curl -H "Authorization: Bearer {token}" {url}/v1/index\n'
    )


def no_access_warning(path: Path) -> str:
    return (
        f"wenchang: warning: {path} holds no tokens, so every HTTP and MCP request "
        "is refused (401). No token is created automatically once a token file "
        "exists. Create one with\n  wenchang token create --grant user=me:owner "
        "--label laptop\n(a running server accepts it without a restart)."
    )


def ensure_first_token(settings: Settings, url: str) -> str | None:
    """On an empty machine, create one owner token for the local identity.

    Only a missing token file (or one created just for the cursor secret) gets
    one: a file whose tokens were revoked means "no access" and gets a warning.
    """
    path = settings.tokens_path
    if read_token_file(path).tokens:
        return None
    created = create_first_token(path, settings.local_grants, label="local")
    if created is None:
        print(no_access_warning(path), file=sys.stderr, flush=True)
        return None
    secret, record = created
    grants = ", ".join(
        f"{scope}={g.entity_id}:{g.role}" for scope, g in record.grants.items()
    )
    return (
        f"Created {path} with one owner token ({grants}). It is shown only now:\n\n"
        f"  {secret}\n\n{client_snippet(url, secret)}"
    )


def warn_about_unknown_variables() -> None:
    """Name each unknown WENCHANG_* variable once, on stderr (stdout may be MCP)."""
    for warning in unknown_variable_warnings(os.environ):
        print(f"wenchang: warning: {warning}", file=sys.stderr, flush=True)


def _config() -> int:
    warn_about_unknown_variables()
    print(effective_settings(load_settings()))
    return 0


def _openapi() -> int:
    from app.server.http.openapi_document import render
    from app.server.routes import published_openapi

    print(render(published_openapi), end="")
    return 0


def _serve(arguments: argparse.Namespace) -> int:
    warn_about_unknown_variables()
    overrides = {"storage": arguments.storage} if arguments.storage else {}
    settings = load_settings(**overrides)
    require_shared_storage(settings, arguments.workers)  # before any token or import
    notice = ensure_first_token(settings, f"http://{arguments.host}:{arguments.port}")
    if notice:
        print(notice, flush=True)
    if arguments.workers != 1:
        return run_workers(settings, arguments.host, arguments.port, arguments.workers)
    import uvicorn

    from app.server.asgi import build_app

    telemetry = telemetry_from_environment(os.environ)
    app = build_app(settings, telemetry=telemetry, freeze_heap=True)
    uvicorn.run(
        app,
        host=arguments.host,
        port=arguments.port,
        log_level="info",
        log_config=configured_logging(settings),
    )
    return 0


def _mcp() -> int:
    import anyio

    from app.server.mcp.server import serve_stdio

    # stdout carries the protocol: nothing else may be printed to it.
    warn_about_unknown_variables()
    settings = load_settings()
    configured_logging(settings)
    telemetry = telemetry_from_environment(os.environ)
    observers = (
        (log_tool_call,)
        if telemetry is None
        else (
            log_tool_call,
            telemetry.observe_tool_call,
        )
    )
    anyio.run(partial(serve_stdio, settings, on_call=observers))
    return 0


def _token(arguments: argparse.Namespace) -> int:
    settings = load_settings()
    path = settings.tokens_path
    if arguments.action == "create":
        grants = parse_grants(arguments.grant)
        secret, record = create_token(
            path, grants, label=arguments.label, expires_in_days=arguments.expires
        )
        print(f"{record.token_id} created; the token is shown only now:\n{secret}")
    elif arguments.action == "list":
        now = datetime.now(UTC)
        for record in read_token_file(path).tokens:
            grants = " ".join(
                f"{scope}={g.entity_id}:{g.role}" for scope, g in record.grants.items()
            )
            expired = record.expires_at is not None and record.expires_at <= now
            expires = record.expires_at.isoformat() if record.expires_at else "never"
            state = "expired" if expired else f"expires {expires}"
            print(f"{record.token_id}  {record.label or '-'}  {grants}  {state}")
        for line in oauth_client_lines(settings):
            print(line)
    elif (revoked := revoke_oauth_client(settings, arguments.token_id)) is not None:
        print(f"{revoked} token(s) of OAuth client {arguments.token_id} revoked")
    elif not revoke_token(path, arguments.token_id):
        print(f"no token {arguments.token_id!r} in {path}; see `wenchang token list`")
        return 1
    else:
        print(f"{arguments.token_id} revoked")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "mcp":
            return _mcp()
        if arguments.command == "serve":
            return _serve(arguments)
        if arguments.command == "config":
            return _config()
        if arguments.command == "openapi":
            return _openapi()
        if arguments.command == "webhook":
            return run_webhook(arguments)
        return _token(arguments)
    except (SettingsError, ValueError) as exc:
        print(f"wenchang: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
