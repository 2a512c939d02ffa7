"""The typed client: preconditions on the wire, typed errors, bounded retries.

Everything the docs say about results and errors is pinned by the transport
conformance suite; this module covers what only the HTTP client does.
"""

import json
import uuid
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import tenchi.errors as tenchi_errors
import wenchang_client.errors as client_errors
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from tenchi.errors import ERROR_SOURCE_HEADER, ErrorDef, error_body
from tenchi.idempotency import IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS
from tenchi.rate_limits import RATE_LIMITED
from wenchang_client import (
    AsyncMemoryClient,
    AttemptOutcome,
    RetryPolicy,
    error_from_payload,
    transient_retry,
)
from wenchang_client.errors import (
    BackendUnavailableError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    ResolverFailureError,
    VersionConflictError,
    WenchangError,
)

from app.server.asgi import build_app
from app.server.refusals import REFUSALS
from app.server.settings import Settings
from app.shared import errors as shared_errors
from app.shared.errors import GUIDANCE, Category, backend_unavailable_error
from app.shared.identity import Grant, Identity
from app.shared.locations import Location
from tests.support.in_process_client import open_in_process_client
from tests.support.lossy import dropping_clients
from tests.support.transports import TokenRegistry, serve_in_thread

ALICE = Identity(grants={"user": Grant("alice", "owner")}, label="client-tests")
LOCATION = Location("user", "notes", "tea")


def settings_for(root: Path) -> Settings:
    return Settings(
        storage="memory://",
        tokens_file=str(root / "tokens.json"),
        cursor_secret="client-tests-cursor-secret",
    )


class Recorder(httpx.AsyncBaseTransport):
    """Forwards to the network and remembers every request sent."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[httpx.Request] = []
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class Server:
    def __init__(self, url: str, tokens: TokenRegistry) -> None:
        self.url = url
        self.tokens = tokens


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Generator[Server]:
    tokens = TokenRegistry()
    app = build_app(settings_for(tmp_path_factory.mktemp("client")), resolver=tokens)
    with serve_in_thread(app) as url:
        yield Server(url, tokens)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def client(
    server: Server, recorder: Recorder
) -> AsyncGenerator[AsyncMemoryClient]:
    fresh = {"user": Grant(f"alice-{uuid.uuid4().hex}", "owner")}
    token = server.tokens.issue(Identity(grants=fresh, label=ALICE.label))
    async with AsyncMemoryClient(server.url, token=token, transport=recorder) as client:
        yield client


async def create(client: AsyncMemoryClient, name: str = "tea") -> str:
    written = await client.write_file(
        "user",
        "notes",
        name,
        content="- [stated] a\n",
        description="",
        aliases=[],
        expected_version=None,
    )
    return written.version


async def test_create_sends_if_none_match_and_replace_sends_if_match(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """expected_version None is ``If-None-Match: *``; a version is ``If-Match``."""
    version = await create(client)

    await client.write_file(
        "user",
        "notes",
        "tea",
        content="",
        description="",
        aliases=[],
        expected_version=version,
    )

    created, replaced = recorder.sent
    assert (created.method, created.url.path) == ("PUT", "/v1/files/user/notes/tea")
    assert created.headers.get("if-none-match") == "*"
    assert "if-match" not in created.headers
    assert replaced.headers.get("if-match") == f'"{version}"'
    assert "if-none-match" not in replaced.headers


async def test_every_other_mutation_sends_if_match(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """append_line, replace_fact and delete_file send the version as If-Match."""
    version = await create(client)

    appended = await client.append_line(
        "user", "notes", "tea", line="- [stated] b", expected_version=version
    )
    replaced = await client.replace_fact(
        "user",
        "notes",
        "tea",
        old_string="b",
        new_string="c",
        expected_version=appended.version,
    )
    await client.delete_file("user", "notes", "tea", expected_version=replaced.version)

    sent = [(r.method, r.url.path, r.headers.get("if-match")) for r in recorder.sent]
    assert sent[1:] == [
        ("POST", "/v1/files/user/notes/tea/lines", f'"{version}"'),
        ("POST", "/v1/files/user/notes/tea/replace", f'"{appended.version}"'),
        ("DELETE", "/v1/files/user/notes/tea", f'"{replaced.version}"'),
    ]


async def test_errors_are_typed_with_their_payload(
    client: AsyncMemoryClient,
) -> None:
    """A 412 is VersionConflictError with its fields and the whole payload."""
    version = await create(client)

    with pytest.raises(VersionConflictError) as raised:
        await create(client)

    assert (raised.value.content, raised.value.version) == ("- [stated] a\n", version)
    assert (raised.value.scope, raised.value.area, raised.value.name) == (
        "user",
        "notes",
        "tea",
    )
    assert raised.value.details["error"] == "VersionConflictError"


async def test_a_path_a_url_cannot_carry_is_rejected_before_sending(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """A name with ``/`` (or a dot segment) fails locally, as the server would."""
    with pytest.raises(InvalidArgumentError) as raised:
        await client.read_file("user", "notes", "a/b")

    assert raised.value.argument == "name"
    assert recorder.sent == []


async def test_a_version_an_etag_cannot_carry_is_rejected_before_sending(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """An expected_version with a quote is a typed error, not a pydantic one."""
    with pytest.raises(InvalidArgumentError):
        await client.append_line("user", "notes", "tea", line="x", expected_version='"')

    assert recorder.sent == []


async def test_unknown_token_is_resolver_failure(server: Server) -> None:
    """401 becomes ResolverFailureError (permanent)."""
    async with AsyncMemoryClient(server.url, token="wct_unknown") as client:
        with pytest.raises(ResolverFailureError) as raised:
            await client.get_memory_index()

    assert raised.value.category == "permanent"


async def test_an_unreachable_server_is_backend_unavailable() -> None:
    """A refused connection is BackendUnavailableError(unavailable)."""
    async with AsyncMemoryClient("http://127.0.0.1:9", token="t") as client:
        with pytest.raises(BackendUnavailableError) as raised:
            await client.get_memory_index()

    assert raised.value.reason == "unavailable"
    assert isinstance(raised.value.__cause__, httpx.TransportError)


class Unavailable:
    """The app behind a proxy that answers the first ``failures`` calls with the
    app's own 503 BACKEND_UNAVAILABLE envelope and ``Retry-After``."""

    def __init__(self, app: ASGIApp, *, failures: int, retry_after: str) -> None:
        self.app = app
        self.failures = failures
        self.retry_after = retry_after
        self.requests = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.requests += 1
        if self.requests > self.failures:
            await self.app(scope, receive, send)
            return
        error = backend_unavailable_error("unavailable")
        body = error_body(code=error.code, message=error.message, details=error.details)
        headers = {"Retry-After": self.retry_after, ERROR_SOURCE_HEADER: "app"}
        await JSONResponse(body, status_code=503, headers=headers)(scope, receive, send)


@asynccontextmanager
async def flaky_client(
    tmp_path: Path,
    *,
    failures: int,
    retry_after: str = "0",
    retry: RetryPolicy | None = None,
) -> AsyncGenerator[tuple[AsyncMemoryClient, Unavailable, list[AttemptOutcome]]]:
    """A client of an app whose first ``failures`` calls answer 503."""
    tokens = TokenRegistry()
    app = build_app(settings_for(tmp_path), resolver=tokens)
    proxy = Unavailable(app, failures=failures, retry_after=retry_after)
    attempts: list[AttemptOutcome] = []
    async with open_in_process_client(
        proxy,
        token=tokens.issue(ALICE),
        retry=retry,
        attempt_observers=[attempts.append],
    ) as client:
        yield client, proxy, attempts


QUICK = {"base_delay_seconds": 0.0, "max_delay_seconds": 5.0}


async def test_transient_errors_are_retried_until_success(tmp_path: Path) -> None:
    """Two 503s, then the answer: the call succeeds after three attempts."""
    policy = transient_retry(max_attempts=3, **QUICK)
    async with flaky_client(tmp_path, failures=2, retry=policy) as (client, proxy, _):
        index = await client.get_memory_index()

    assert index.entries == []
    assert proxy.requests == 3


async def test_retry_waits_as_long_as_retry_after_says(tmp_path: Path) -> None:
    """The delay before a retry is the server's Retry-After (here one second)."""
    policy = transient_retry(max_attempts=2, **QUICK)
    async with flaky_client(tmp_path, failures=1, retry_after="1", retry=policy) as (
        client,
        _,
        attempts,
    ):
        await client.get_memory_index()

    assert [a.retry_delay_seconds for a in attempts] == [1.0, None]
    assert [a.will_retry for a in attempts] == [True, False]


async def test_retries_are_bounded_by_attempts(tmp_path: Path) -> None:
    """When every attempt is refused, max_attempts requests then the error."""
    policy = transient_retry(max_attempts=3, **QUICK)
    async with flaky_client(tmp_path, failures=10, retry=policy) as (client, proxy, _):
        with pytest.raises(BackendUnavailableError) as raised:
            await client.get_memory_index()

    assert proxy.requests == 3
    assert raised.value.reason == "unavailable"


async def test_retries_are_bounded_by_total_time(tmp_path: Path) -> None:
    """A Retry-After beyond the time budget ends the call as a timeout."""
    policy = transient_retry(max_attempts=5, total_timeout_seconds=0.05, **QUICK)
    async with flaky_client(tmp_path, failures=10, retry_after="5", retry=policy) as (
        client,
        proxy,
        _,
    ):
        with pytest.raises(BackendUnavailableError) as raised:
            await client.get_memory_index()

    assert proxy.requests == 1
    assert raised.value.reason == "timeout"


async def test_version_guarded_writes_are_retried(tmp_path: Path) -> None:
    """transient_retry covers writes: a create refused once lands once."""
    policy = transient_retry(max_attempts=2, **QUICK)
    async with flaky_client(tmp_path, failures=1, retry=policy) as (client, proxy, _):
        await create(client)
        listing = await client.list_prefix("user")

    assert [e.name for e in listing.entries] == ["tea"]
    assert proxy.requests == 3


async def test_a_policy_without_unsafe_methods_retries_only_reads(
    tmp_path: Path,
) -> None:
    """A caller's read-only policy is applied to reads and skipped for writes."""
    policy = RetryPolicy(
        max_attempts=2, retry_on=("BACKEND_UNAVAILABLE",), base_delay_seconds=0.0
    )
    async with flaky_client(tmp_path, failures=1, retry=policy) as (client, proxy, _):
        with pytest.raises(BackendUnavailableError):
            await create(client)
        await client.get_memory_index()

    assert proxy.requests == 2


async def test_without_a_policy_nothing_is_retried(tmp_path: Path) -> None:
    """Retries are opt-in: the first 503 is raised."""
    async with flaky_client(tmp_path, failures=1) as (client, proxy, _):
        with pytest.raises(BackendUnavailableError):
            await client.get_memory_index()

    assert proxy.requests == 1


SPEC_ERRORS = {
    "VersionConflictError": "VERSION_CONFLICT",
    "OversizeWriteError": "OVERSIZE_WRITE",
    "FileQuotaExceededError": "FILE_QUOTA_EXCEEDED",
    "ReplaceFactMatchError": "REPLACE_FACT_MATCH",
    "InvalidArgumentError": "INVALID_ARGUMENT",
    "NotFoundError": "MEMORY_NOT_FOUND",
    "RestrictedScopeError": "RESTRICTED_SCOPE",
    "ResolverFailureError": "UNAUTHORIZED",
    "BackendUnavailableError": "BACKEND_UNAVAILABLE",
    "PreconditionRequiredError": "PRECONDITION_REQUIRED",
}


def test_every_spec_error_is_one_exception_class() -> None:
    """Each memory error has a class of that name, with the HTTP code, exported."""
    for name, code in SPEC_ERRORS.items():
        cls = getattr(client_errors, name)

        assert name in client_errors.__all__
        assert issubclass(cls, WenchangError)
        assert cls.code == code


def test_exception_categories_match_the_server_payload() -> None:
    """A class's category is the one the server renders for that error."""
    raised = [
        shared_errors.version_conflict_error(LOCATION, "c", "1"),
        shared_errors.oversize_write_error(LOCATION, 2, 1),
        shared_errors.file_quota_exceeded_error(LOCATION, 1),
        shared_errors.replace_fact_match_error(LOCATION, "c", "1", 0),
        shared_errors.invalid_argument_error("name", "bad"),
        shared_errors.memory_not_found_error(LOCATION),
        shared_errors.role_required_error(LOCATION, ["admin"]),
        shared_errors.resolver_failure_error(),
        shared_errors.backend_unavailable_error("timeout"),
        shared_errors.precondition_required_error(),
    ]

    for error in raised:
        translated = error_from_payload(error.code, error.message, error.details)

        assert type(translated).__name__ == error.details["error"]
        assert translated.category == error.details["category"]
        assert translated.message.endswith(GUIDANCE[Category(translated.category)])
        assert translated.details == error.details


def test_a_malformed_or_unknown_error_is_internal() -> None:
    """A payload missing its fields, or an unknown code, is InternalError."""
    assert isinstance(error_from_payload("VERSION_CONFLICT", "m", {}), InternalError)
    assert isinstance(error_from_payload("SOMETHING_NEW", "m", None), InternalError)


def documented_codes(node: Any) -> set[str]:
    """The values of every ``code`` enum in an OpenAPI document."""
    children: list[Any] = []
    found: set[str] = set()
    if isinstance(node, list):
        children = cast(list[Any], node)
    elif isinstance(node, dict):
        schema = cast(dict[str, Any], node)
        children = list(schema.values())
        code = schema.get("code")
        if isinstance(code, dict):
            found = {str(value) for value in cast(dict[str, Any], code).get("enum", [])}
    return found.union(*(documented_codes(child) for child in children))


def server_error_codes() -> set[str]:
    """Every code the server can answer with: ours, Tenchi's, and the snapshot's."""
    ours = [v for v in vars(shared_errors).values() if isinstance(v, ErrorDef)]
    tenchi = [v for v in vars(tenchi_errors).values() if isinstance(v, ErrorDef)]
    guards = [RATE_LIMITED, IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS]
    snapshot = Path(__file__).parent.parent / "openapi.json"
    documented = documented_codes(json.loads(snapshot.read_text()))
    return {d.code for d in [*ours, *tenchi, *guards]} | documented | set(REFUSALS)


def exported_classes() -> dict[str, type[WenchangError]]:
    classes = [getattr(client_errors, name) for name in client_errors.__all__]
    return {
        cls.code: cls
        for cls in classes
        if isinstance(cls, type) and issubclass(cls, WenchangError)
    }


def test_every_code_the_server_can_send_has_an_exception_class() -> None:
    """No server code falls through to InternalError: each has its own class,
    of the category the server sends for it."""
    classes = exported_classes()

    unmapped = server_error_codes() - classes.keys()

    assert unmapped == set()
    for code, refusal in REFUSALS.items():
        assert classes[code].category == refusal.category, code
        assert type(error_from_payload(code, "m", None)) is classes[code]


@asynccontextmanager
async def limited_client(
    tmp_path: Path, **limits: int
) -> AsyncGenerator[AsyncMemoryClient]:
    """An in-process client of an app with the given HTTP limits."""
    tokens = TokenRegistry()
    settings = settings_for(tmp_path).model_copy(update=limits)
    app = build_app(settings, resolver=tokens)
    async with open_in_process_client(app, token=tokens.issue(ALICE)) as client:
        yield client


async def test_a_token_over_its_rate_limit_raises_rate_limited(
    tmp_path: Path,
) -> None:
    """429 RATE_LIMITED is a transient RateLimitedError carrying Retry-After."""
    async with limited_client(tmp_path, rate_limit=1) as client:
        await client.get_memory_index()

        with pytest.raises(client_errors.RateLimitedError) as raised:
            await client.get_memory_index()

    assert raised.value.category == "transient"
    assert raised.value.retry_after_seconds is not None
    assert 1 <= raised.value.retry_after_seconds <= 60


async def test_a_body_over_the_request_limit_raises_request_too_large(
    tmp_path: Path,
) -> None:
    """The framework's 413 is RequestTooLargeError with the limit; nothing lands."""
    async with limited_client(tmp_path, max_request_bytes=2048) as client:
        with pytest.raises(client_errors.RequestTooLargeError) as raised:
            await client.write_file(
                "user",
                "notes",
                "tea",
                content="x" * 4096,
                description="",
                aliases=[],
                expected_version=None,
            )
        with pytest.raises(NotFoundError):
            await client.read_file("user", "notes", "tea")

    assert (raised.value.category, raised.value.limit) == ("permanent", 2048)
    assert "send less" in raised.value.message


async def refuse_validation(scope: Scope, receive: Receive, send: Send) -> None:
    """An app whose framework refuses every request's shape."""
    problem = {"type": "missing", "loc": ["body", "content"], "msg": "Field required"}
    body = error_body(code="VALIDATION_ERROR", message="Bad", details=[problem])
    headers = {ERROR_SOURCE_HEADER: "framework"}
    await JSONResponse(body, status_code=422, headers=headers)(scope, receive, send)


async def test_a_framework_validation_refusal_is_an_invalid_argument() -> None:
    """VALIDATION_ERROR is RequestValidationError, naming the field to correct."""
    transport = httpx.ASGITransport(app=refuse_validation)
    async with AsyncMemoryClient(
        "http://testserver", token="t", transport=transport
    ) as client:
        with pytest.raises(InvalidArgumentError) as raised:
            await client.get_memory_index()

    assert type(raised.value) is client_errors.RequestValidationError
    assert raised.value.argument == "content"
    assert raised.value.errors[0]["msg"] == "Field required"


class RateLimitedOnce:
    """The app behind a proxy whose first answer is RATE_LIMITED, Retry-After 0."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.requests += 1
        if scope["type"] != "http" or self.requests > 1:
            await self.app(scope, receive, send)
            return
        body = error_body(code=RATE_LIMITED.code, message=RATE_LIMITED.message)
        headers = {"Retry-After": "0", ERROR_SOURCE_HEADER: "app"}
        await JSONResponse(body, status_code=429, headers=headers)(scope, receive, send)


async def test_transient_retry_retries_a_rate_limited_write(tmp_path: Path) -> None:
    """A write refused by the rate limit is sent again and lands once."""
    tokens = TokenRegistry()
    proxy = RateLimitedOnce(build_app(settings_for(tmp_path), resolver=tokens))
    policy = transient_retry(max_attempts=2, **QUICK)
    async with open_in_process_client(
        proxy, token=tokens.issue(ALICE), retry=policy
    ) as client:
        await create(client)
        listing = await client.list_prefix("user")

    assert [e.name for e in listing.entries] == ["tea"]
    assert proxy.requests == 3


async def test_a_retried_append_whose_answer_was_lost_succeeds_once(
    server: Server,
) -> None:
    """The retry carries the first attempt's Idempotency-Key: the server
    answers with the landed result, and the line is in the file once."""
    async with dropping_clients(server.url, server.tokens, "retries") as (
        dropping,
        plain,
        proxy,
    ):
        version = await create(plain)
        appended = await dropping.append_line(
            "user", "notes", "tea", line="- [stated] b", expected_version=version
        )
        stored = await plain.read_file("user", "notes", "tea")

    assert appended == stored
    assert stored.content == "- [stated] a\n- [stated] b\n"
    keys = [request.headers.get("Idempotency-Key") for request in proxy.mutations]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


async def test_every_mutation_carries_its_own_idempotency_key(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    version = await create(client)
    moved = await client.append_line(
        "user", "notes", "tea", line="- [stated] b", expected_version=version
    )
    replaced = await client.replace_fact(
        "user",
        "notes",
        "tea",
        old_string="b",
        new_string="c",
        expected_version=moved.version,
    )
    await client.delete_file("user", "notes", "tea", expected_version=replaced.version)

    keys = [r.headers.get("Idempotency-Key") for r in recorder.sent]
    assert len(keys) == 4 and all(keys) and len(set(keys)) == 4


async def test_a_retried_create_whose_answer_was_lost_succeeds(
    server: Server,
) -> None:
    """Without the key the retry would meet its own file: a VersionConflict."""
    async with dropping_clients(server.url, server.tokens, "retries") as (
        dropping,
        plain,
        proxy,
    ):
        version = await create(dropping)
        stored = await plain.read_file("user", "notes", "tea")

    assert version == stored.version
    assert len(proxy.mutations) == 2


async def test_the_index_is_revalidated_with_its_etag(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """A second read of an unchanged index is a 304; a write brings the new one."""
    await client.write_file(
        "user",
        "notes",
        "tea",
        content="- [stated] Tea.\n",
        description="",
        aliases=[],
        expected_version=None,
    )
    first = await client.get_memory_index()
    first.entries.clear()  # the caller's copy: the client's must not change

    again = await client.get_memory_index()

    assert recorder.statuses[-1] == 304
    assert recorder.sent[-1].headers["If-None-Match"].startswith('"ix-')
    assert [entry.name for entry in again.entries] == ["tea"]
    await client.write_file(
        "user",
        "notes",
        "coffee",
        content="- [stated] Coffee.\n",
        description="",
        aliases=[],
        expected_version=None,
    )
    after = await client.get_memory_index()
    assert recorder.statuses[-1] == 200
    assert sorted(entry.name for entry in after.entries) == ["coffee", "tea"]


async def test_the_owners_index_with_expired_files_is_held_apart(
    client: AsyncMemoryClient, recorder: Recorder
) -> None:
    """include_expired=True lists an expired file; each view is revalidated
    with its own tag, so one view is never answered with the other's index."""
    await client.write_file(
        "user",
        "notes",
        "old",
        content="- [stated] Old.\n",
        description="",
        aliases=[],
        expected_version=None,
        expires_at=datetime(2020, 1, 1, tzinfo=UTC),
    )
    hidden = await client.get_memory_index()
    shown = await client.get_memory_index(include_expired=True)
    first_shown = recorder.sent[-1]
    again = await client.get_memory_index(include_expired=True)
    held_shown = recorder.sent[-1].headers["If-None-Match"]
    default_again = await client.get_memory_index()

    assert hidden.entries == [] and "if-none-match" not in first_shown.headers
    assert [(e.name, e.expires_at) for e in shown.entries] == [
        ("old", "2020-01-01T00:00:00Z")
    ]
    assert first_shown.url.params["include_expired"] == "true"
    assert [e.name for e in again.entries] == ["old"]
    assert recorder.statuses[-4:] == [200, 200, 304, 304]
    assert recorder.sent[-1].headers["If-None-Match"] != held_shown
    assert default_again.entries == []
