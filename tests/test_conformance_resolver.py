"""The resolver conformance suite on the token-file and fixed resolvers."""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.features.memory.policy import ScopePolicy
from app.infra.tokens.token_file import create_token, revoke_token
from app.infra.tokens.token_file_resolver import FixedResolver, TokenFileResolver
from app.shared.identity import Grant, Identity, Resolver
from tests.support.resolver_conformance import ResolverConformance

GRANTS = {"user": Grant("alice", "owner"), "team": Grant("acme", "member")}
POLICY = ScopePolicy(write_roles={"team": frozenset({"admin"})})
ROLES = frozenset({"owner", "member", "admin"})


class Tokens:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.valid, _ = create_token(path, GRANTS, label="desktop")
        long_ago = datetime.now(UTC) - timedelta(days=30)
        self.expired, _ = create_token(path, GRANTS, expires_in_days=1, now=long_ago)
        self.revoked, record = create_token(path, GRANTS, label="old")
        assert revoke_token(path, record.token_id)


class TestTokenFileResolver(ResolverConformance):
    @pytest.fixture
    def tokens(self, tmp_path: Path) -> Tokens:
        return Tokens(tmp_path / "tokens.json")

    @pytest.fixture
    def resolver(self, tokens: Tokens) -> Resolver:
        return TokenFileResolver(tokens.path)

    @pytest.fixture
    def valid_credentials(self, tokens: Tokens) -> str:
        return tokens.valid

    @pytest.fixture
    def invalid_credentials(self, tokens: Tokens) -> str:
        return tokens.valid + "x"

    @pytest.fixture
    def expired_credentials(self, tokens: Tokens) -> str:
        return tokens.expired

    @pytest.fixture
    def revoked_credentials(self, tokens: Tokens) -> str:
        return tokens.revoked

    @pytest.fixture
    def expected_grants(self) -> Mapping[str, Grant]:
        return GRANTS

    @pytest.fixture
    def expected_label(self) -> str | None:
        return "desktop"

    @pytest.fixture
    def policy(self) -> ScopePolicy:
        return POLICY

    @pytest.fixture
    def known_roles(self) -> frozenset[str]:
        return ROLES


class TestFixedResolver(ResolverConformance):
    @pytest.fixture
    def resolver(self) -> Resolver:
        return FixedResolver(Identity(grants=GRANTS))

    @pytest.fixture
    def valid_credentials(self) -> str:
        return "anything"

    @pytest.fixture
    def invalid_credentials(self) -> str:
        pytest.skip("a fixed resolver accepts every credential")

    @pytest.fixture
    def expired_credentials(self) -> str:
        pytest.skip("a fixed resolver has no expiry")

    @pytest.fixture
    def revoked_credentials(self) -> str:
        pytest.skip("a fixed resolver cannot revoke")

    @pytest.fixture
    def expected_grants(self) -> Mapping[str, Grant]:
        return GRANTS

    @pytest.fixture
    def expected_label(self) -> str | None:
        return None

    @pytest.fixture
    def policy(self) -> ScopePolicy:
        return POLICY

    @pytest.fixture
    def known_roles(self) -> frozenset[str]:
        return ROLES
