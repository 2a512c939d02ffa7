"""The webhook routes: each contract and the use case that serves it."""

from app.shared.bindings import Binding

from .contracts import (
    add_webhook_contract,
    enable_webhook_contract,
    list_webhooks_contract,
    remove_webhook_contract,
)
from .use_cases.add_webhook import add_webhook
from .use_cases.enable_webhook import enable_webhook
from .use_cases.list_webhooks import list_webhooks
from .use_cases.remove_webhook import remove_webhook

bindings = (
    Binding(add_webhook_contract, add_webhook),
    Binding(list_webhooks_contract, list_webhooks),
    Binding(enable_webhook_contract, enable_webhook),
    Binding(remove_webhook_contract, remove_webhook),
)
