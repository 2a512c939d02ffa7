"""The consent page's sealed fields: what this server sealed comes back
unchanged until it expires; anything altered, forged or late is refused."""

import base64
import json

import pytest

from app.features.oauth.domain.seal import (
    SEAL_SECONDS,
    request_fingerprint,
    seal,
    unseal,
)

KEY = b"k" * 32
NOW = 1_000_000.0


def test_a_sealed_payload_comes_back_with_its_expiry() -> None:
    sealed = seal(KEY, {"grants": ["user=ada:owner"], "n": 1}, now=NOW)
    assert unseal(KEY, sealed, now=NOW) == {
        "grants": ["user=ada:owner"],
        "n": 1,
        "exp": NOW + SEAL_SECONDS,
    }


def test_a_seal_lasts_ten_minutes() -> None:
    sealed = seal(KEY, {"n": 1}, now=NOW)
    assert SEAL_SECONDS == 600
    assert unseal(KEY, sealed, now=NOW + 599.999) is not None
    assert unseal(KEY, sealed, now=NOW + 600) is None


def test_another_key_or_an_altered_body_or_mac_is_refused() -> None:
    sealed = seal(KEY, {"role": "reader"}, now=NOW)
    text, mac = sealed.split(".")
    assert unseal(b"j" * 32, sealed, now=NOW) is None
    body = json.loads(base64.urlsafe_b64decode(text))
    forged = base64.urlsafe_b64encode(
        json.dumps({**body, "role": "owner"}, sort_keys=True).encode()
    ).decode()
    assert unseal(KEY, f"{forged}.{mac}", now=NOW) is None
    assert (
        unseal(KEY, f"{text}.{mac[:-1]}{'0' if mac[-1] != '0' else '1'}", now=NOW)
        is None
    )
    assert unseal(KEY, text, now=NOW) is None


@pytest.mark.parametrize(
    "sealed", ["", ".", "not base64!.00", "a.b.c", "é.x", "YQ==.é", "YQ==.00"]
)
def test_garbage_is_refused_not_an_error(sealed: str) -> None:
    assert unseal(KEY, sealed, now=NOW) is None


def test_a_fingerprint_binds_the_request_parameters_in_any_order() -> None:
    params = {"client_id": "wcl_a", "state": "s-1"}
    fingerprint = request_fingerprint(params)
    assert fingerprint == request_fingerprint(dict(reversed(params.items())))
    assert fingerprint != request_fingerprint({**params, "state": "s-2"})
    assert fingerprint != request_fingerprint({"client_id": "wcl_a"})
    assert len(fingerprint) == 64
