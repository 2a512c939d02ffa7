"""The resolver conformance suite: what every ``Resolver`` adapter must do.

Subclass ``ResolverConformance`` in a ``Test*`` class and supply the fixtures
``resolver``, ``valid_credentials``, ``expected_grants``, ``expected_label``,
``policy`` and ``known_roles``; ``invalid_credentials``, ``expired_credentials``
and ``revoked_credentials`` call ``pytest.skip`` where the adapter has no such
credentials (a fixed resolver accepts everything). Cases check the resolver
itself, the identity it returns against the scope policy (grants, roles,
system/), and the same credentials at the HTTP boundary through the typed client.
"""

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from tenchi.errors import AppError
from wenchang_client import AsyncMemoryClient, error_from_payload
from wenchang_client.errors import (
    InvalidArgumentError,
    ResolverFailureError,
    RestrictedScopeError,
)

from app.features.memory.policy import (
    ScopePolicy,
    locate_file,
    require_grant,
    require_writable,
)
from app.infra.memory.index_cache import NoIndexCache
from app.infra.memory.storage import MemoryStorage
from app.server.asgi import build_app
from app.server.http.hooks import authenticate
from app.server.settings import Settings
from app.shared.errors import GUIDANCE, Category, unauthorized
from app.shared.identity import (
    Grant,
    Identity,
    ResolutionFailure,
    Resolver,
    is_valid_segment,
)
from tests.support.contexts import context_over
from tests.support.in_process_client import open_in_process_client

__all__ = ["ResolverConformance"]

UNGRANTED = "conformance-ungranted"
CALLS = 3


def resolved(resolver: Resolver, credentials: str) -> Identity:
    outcome = resolver.resolve(credentials)
    if not isinstance(outcome, Identity):
        pytest.fail(f"{type(resolver).__name__} rejected valid credentials: {outcome}")
    return outcome


def refused_over_http(resolver: Resolver, credentials: str) -> AppError:
    """The error the bearer hook raises for ``credentials``."""
    with pytest.raises(AppError) as raised:
        authenticate(resolver, f"Bearer {credentials}")
    return raised.value


def assert_resolver_failure(error: AppError) -> None:
    """UNAUTHORIZED with the ResolverFailureError payload and a Bearer challenge."""
    translated = error_from_payload(error.code, error.message, error.details)
    assert error.definition is unauthorized
    assert isinstance(translated, ResolverFailureError)
    assert translated.category == "permanent"
    assert translated.message.endswith(GUIDANCE[Category.PERMANENT])
    assert error.headers["WWW-Authenticate"].startswith("Bearer")


class ResolverConformance:
    """Every resolver case; supply the fixtures named in the module docstring."""

    @pytest.fixture
    def identity(self, resolver: Resolver, valid_credentials: str) -> Identity:
        return resolved(resolver, valid_credentials)

    def test_valid_credentials_resolve_to_the_configured_grants(
        self,
        identity: Identity,
        expected_grants: Mapping[str, Grant],
        expected_label: str | None,
    ) -> None:
        """The identity holds exactly the configured grants and label."""
        assert dict(identity.grants) == dict(expected_grants)
        assert identity.label == expected_label

    def test_resolution_is_consistent(
        self, resolver: Resolver, valid_credentials: str, identity: Identity
    ) -> None:
        """The same credentials resolve to the same identity every time."""
        again = [resolved(resolver, valid_credentials) for _ in range(CALLS)]

        assert again == [identity] * CALLS

    @pytest.mark.parametrize("kind", ["invalid", "expired", "revoked"])
    def test_unusable_credentials_are_a_resolution_failure(
        self, request: pytest.FixtureRequest, resolver: Resolver, kind: str
    ) -> None:
        """Invalid, expired or revoked: a ResolutionFailure, never an exception."""
        credentials: str = request.getfixturevalue(f"{kind}_credentials")

        outcomes = [resolver.resolve(credentials) for _ in range(CALLS)]

        for outcome in outcomes:
            assert isinstance(outcome, ResolutionFailure), outcome
            assert outcome.detail

    @pytest.mark.parametrize("kind", ["invalid", "expired", "revoked"])
    def test_unusable_credentials_are_refused_at_the_http_boundary(
        self, request: pytest.FixtureRequest, resolver: Resolver, kind: str
    ) -> None:
        """The bearer hook turns each failure into ResolverFailureError (401)."""
        credentials: str = request.getfixturevalue(f"{kind}_credentials")

        assert_resolver_failure(refused_over_http(resolver, credentials))

    @pytest.mark.parametrize("header", ["", "Bearer ", "Basic dXNlcjpwYXNz", "token"])
    def test_a_missing_or_malformed_header_is_refused(
        self, resolver: Resolver, header: str
    ) -> None:
        """Without ``Bearer <credentials>`` no resolver is even asked."""
        with pytest.raises(AppError) as raised:
            authenticate(resolver, header)

        assert_resolver_failure(raised.value)

    def test_valid_credentials_pass_the_http_boundary(
        self, resolver: Resolver, valid_credentials: str, identity: Identity
    ) -> None:
        """The bearer hook yields the same identity as the resolver."""
        assert authenticate(resolver, f"Bearer {valid_credentials}") == identity

    def test_granted_scopes_and_entities_are_key_segments(
        self, identity: Identity
    ) -> None:
        """Every scope and entity id can be a storage-key segment."""
        for scope, grant in identity.grants.items():
            assert is_valid_segment(scope), scope
            assert is_valid_segment(grant.entity_id), grant.entity_id
            assert grant.role

    def test_roles_are_known_to_the_scope_configuration(
        self, identity: Identity, policy: ScopePolicy, known_roles: frozenset[str]
    ) -> None:
        """Granted roles and the roles the policy names are all known roles."""
        granted = {grant.role for grant in identity.grants.values()}
        named = {role for roles in policy.write_roles.values() for role in roles}

        assert granted <= known_roles
        assert named <= known_roles

    def test_every_granted_scope_is_readable(self, identity: Identity) -> None:
        """Reads are never role-gated: every granted scope locates a file."""
        for scope, grant in identity.grants.items():
            address = locate_file(identity, scope, "notes", "probe")

            assert address.key == f"{scope}/{grant.entity_id}/notes/probe.md"

    def test_system_area_is_read_only_in_every_scope(
        self, identity: Identity, policy: ScopePolicy
    ) -> None:
        """No role makes system/ writable."""
        for scope in identity.grants:
            address = locate_file(identity, scope, "system", "probe")

            with pytest.raises(AppError) as raised:
                require_writable(identity, policy, address)

            translated = error_from_payload(
                raised.value.code, raised.value.message, raised.value.details
            )
            assert isinstance(translated, RestrictedScopeError)
            assert translated.reason == "system_read_only"

    def test_writes_follow_the_scope_policy(
        self, identity: Identity, policy: ScopePolicy
    ) -> None:
        """A permitted (or unrestricted) role writes; another is role_required."""
        for scope, grant in identity.grants.items():
            address = locate_file(identity, scope, "notes", "probe")
            roles = policy.write_roles.get(scope)
            if roles is None or grant.role in roles:
                require_writable(identity, policy, address)
                continue

            with pytest.raises(AppError) as raised:
                require_writable(identity, policy, address)

            translated = error_from_payload(
                raised.value.code, raised.value.message, raised.value.details
            )
            assert isinstance(translated, RestrictedScopeError)
            assert translated.reason == "role_required"
            assert translated.required_roles == tuple(sorted(roles))

    def test_an_ungranted_scope_is_invalid_and_names_the_granted_ones(
        self, identity: Identity
    ) -> None:
        """A scope outside the grants is InvalidArgumentError(scope)."""
        with pytest.raises(AppError) as raised:
            require_grant(identity, UNGRANTED)

        translated = error_from_payload(
            raised.value.code, raised.value.message, raised.value.details
        )
        assert isinstance(translated, InvalidArgumentError)
        assert translated.argument == "scope"
        assert f"available scopes: {', '.join(sorted(identity.grants))}" in (
            translated.message
        )

    def test_writes_are_recorded_as_the_label(
        self, identity: Identity, expected_label: str | None
    ) -> None:
        """The source of a write is the token's label, else the surface."""
        context = context_over(
            MemoryStorage(),
            NoIndexCache(),
            cursor_key=b"",
            identity=identity,
            surface="http",
        )

        assert context.source == (expected_label or "http")

    async def test_the_typed_client_works_with_valid_credentials(
        self, resolver: Resolver, valid_credentials: str, tmp_path: Path
    ) -> None:
        """Over HTTP the identity reaches the use cases: the index answers."""
        async with self._client(resolver, valid_credentials, tmp_path) as client:
            index = await client.get_memory_index()

        assert (index.entries, index.capped) == ([], [])

    @pytest.mark.parametrize("kind", ["invalid", "expired", "revoked"])
    async def test_the_typed_client_raises_resolver_failure(
        self,
        request: pytest.FixtureRequest,
        resolver: Resolver,
        tmp_path: Path,
        kind: str,
    ) -> None:
        """Over HTTP unusable credentials raise ResolverFailureError."""
        credentials: str = request.getfixturevalue(f"{kind}_credentials")

        async with self._client(resolver, credentials, tmp_path) as client:
            with pytest.raises(ResolverFailureError):
                await client.get_memory_index()

    @staticmethod
    def _client(
        resolver: Resolver, credentials: str, root: Path
    ) -> AbstractAsyncContextManager[AsyncMemoryClient]:
        settings = Settings(
            storage="memory://",
            tokens_file=str(root / "unused-tokens.json"),
            cursor_secret="resolver-conformance-secret",
        )
        app = build_app(settings, resolver=resolver, on_call=())
        return open_in_process_client(app, token=credentials)
