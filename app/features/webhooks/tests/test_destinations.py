"""Which URLs an owner may register, and what a refusal tells them."""

import pytest
from tenchi.errors import AppError

from app.features.memory.tests.conftest import make_context
from app.features.webhooks.policy import WebhookPolicy, require_destination, trusting
from app.features.webhooks.schemas import AddWebhook, WebhookPath
from app.features.webhooks.use_cases.add_webhook import add_webhook
from app.features.webhooks.use_cases.remove_webhook import remove_webhook
from app.server.settings import Settings
from app.shared.errors import memory_not_found, restricted_scope

NO_HOST = "use an http(s) URL with a host, e.g. https://example.com/hook"
CREDENTIALS = "put no credentials in the URL; check the signature instead"
PLAIN = "use https (plain http only for hosts in WENCHANG_WEBHOOK_TRUSTED_HOSTS)"
PRIVATE = (
    "the host is a loopback, private or link-local address; only hosts in "
    "WENCHANG_WEBHOOK_TRUSTED_HOSTS may be"
)


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("https:///hook", NO_HOST),
        ("ftp://hooks.example.com/", NO_HOST),
        ("https://user@hooks.example.com/", CREDENTIALS),
        ("https://:pw@hooks.example.com/", CREDENTIALS),
        ("http://hooks.example.com/", PLAIN),
        ("https://localhost./hook", PRIVATE),
        ("https://LOCALHOST/hook", PRIVATE),
        ("https://224.0.1.1/hook", PRIVATE),
        ("https://[ff0e::1]/hook", PRIVATE),
        ("https://192.168.1.9/hook", PRIVATE),
    ],
)
def test_a_refusal_says_what_to_use_instead(url: str, detail: str) -> None:
    with pytest.raises(AppError) as refused:
        require_destination(url, WebhookPolicy())
    assert refused.value.message.startswith(f"Argument url is invalid: {detail}. ")
    assert refused.value.details["argument"] == "url"


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com/h", "https://8.8.8.8/h", "https://[2001:4860::8]/"],
)
def test_https_to_a_public_host_is_accepted(url: str) -> None:
    assert require_destination(url, WebhookPolicy()) == url


def test_a_trusted_host_matches_whatever_its_case() -> None:
    policy = WebhookPolicy(trusted_hosts=frozenset({"hooks.internal"}))
    assert require_destination("http://Hooks.Internal:8080/h", policy) == (
        "http://Hooks.Internal:8080/h"
    )


async def test_refusals_name_the_scope_and_the_endpoint() -> None:
    viewer = make_context(grants=["user=alice:writer"])
    with pytest.raises(AppError) as refused:
        await add_webhook(AddWebhook(scope="user", url="https://a.example/"), viewer)
    assert refused.value.definition is restricted_scope
    assert refused.value.details["scope"] == "user"
    with pytest.raises(AppError) as missing:
        await remove_webhook(WebhookPath(scope="user", id="wh_none"), make_context())
    assert missing.value.definition is memory_not_found
    assert missing.value.details["scope"] == "user"
    assert "No webhook wh_none is registered" in missing.value.message


def test_a_trusted_host_configured_in_capitals_or_brackets_matches() -> None:
    policy = trusting(["Hooks.Internal", "[::1]"])
    assert policy.trusted_hosts == frozenset({"hooks.internal", "::1"})
    for url in (
        "http://hooks.internal/h",
        "http://HOOKS.internal/h",
        "http://[::1]:81/",
    ):
        assert require_destination(url, policy) == url


def test_trusted_hosts_given_to_the_settings_as_a_list_match_whatever_their_case() -> (
    None
):
    settings = Settings(webhook_trusted_hosts=("Hooks.Internal", "[::1]"))
    policy = settings.webhook_policy
    assert require_destination("http://hooks.internal/h", policy)
    assert require_destination("http://[::1]:81/h", policy)
