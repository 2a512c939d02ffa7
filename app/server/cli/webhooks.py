"""``wenchang webhook add|list|enable|remove``: an entity's webhooks, by an operator.

The commands run the same use cases as ``/v1/webhooks`` on the configured
storage, as the owner of ``--entity`` in the scope (an operator acts for the
entity, as the memory tasks do); the serving processes deliver.
"""

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable

from pydantic import BaseModel
from tenchi.errors import AppError

from app.features.webhooks.schemas import AddWebhook, WebhookPath, WebhookScope
from app.features.webhooks.use_cases.add_webhook import add_webhook
from app.features.webhooks.use_cases.enable_webhook import enable_webhook
from app.features.webhooks.use_cases.list_webhooks import list_webhooks
from app.features.webhooks.use_cases.remove_webhook import remove_webhook
from app.server.context import AppContext
from app.server.runtime import create_lifespan
from app.server.settings import load_settings
from app.shared.identity import Grant, Identity

SURFACE = "cli"


def add_webhook_arguments(webhook: argparse.ArgumentParser) -> None:
    """The actions of ``wenchang webhook`` and their arguments."""
    actions = webhook.add_subparsers(dest="action", required=True)
    for name, help_text in (
        ("add", "register a URL and print its signing secret once"),
        ("list", "show the webhooks and their delivery state"),
        ("enable", "resume a failed webhook"),
        ("remove", "remove a webhook"),
    ):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("scope")
        if name == "add":
            action.add_argument("url")
            action.add_argument("--description", default="")
        elif name != "list":
            action.add_argument("webhook_id")
        action.add_argument("--entity", required=True, help="the entity id, e.g. alice")


def _call(arguments: argparse.Namespace) -> Callable[[AppContext], Awaitable[object]]:
    scope, action = arguments.scope, arguments.action
    if action == "add":
        body = AddWebhook(
            scope=scope, url=arguments.url, description=arguments.description
        )
        return lambda context: add_webhook(body, context)
    if action == "list":
        return lambda context: list_webhooks(WebhookScope(scope=scope), context)
    path = WebhookPath(scope=scope, id=arguments.webhook_id)
    if action == "enable":
        return lambda context: enable_webhook(path, context)
    return lambda context: remove_webhook(path, context)


async def _run(arguments: argparse.Namespace) -> object:
    settings = load_settings()
    grant = Grant(arguments.entity, "owner")
    identity = Identity(grants={arguments.scope: grant}, label=SURFACE)
    async with create_lifespan(settings, surface=SURFACE)() as runtime:
        context = runtime.context.for_call(identity, request_id=SURFACE)
        return await _call(arguments)(context)


def run_webhook(arguments: argparse.Namespace) -> int:
    try:
        result = asyncio.run(_run(arguments))
    except AppError as refused:
        print(f"wenchang: {refused.details.get('message', refused)}")
        return 1
    if isinstance(result, BaseModel):
        print(json.dumps(result.model_dump(), indent=2))
    else:
        print(f"{arguments.webhook_id} removed")
    return 0
