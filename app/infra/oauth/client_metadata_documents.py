"""Client ID Metadata Documents: a client's ``https`` id fetched under SSRF guards.

https only; every address the host resolves to must be public (no private,
loopback, link-local, multicast or reserved one) unless the host is trusted
by the operator, and the connection goes to exactly the addresses checked,
so a DNS answer cannot change between the check and the connect. Five
seconds in all, 64 KiB at most, no redirects; a document is kept as long as
its ``Cache-Control`` allows (at most a day) and must name its own URL as
``client_id``.
"""

import ipaddress
import json
import re
import socket
import ssl
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from app.features.oauth.domain import redirect_uri_problem
from app.features.oauth.ports import ClientRecord, OAuthStore
from app.shared.errors.oauth import OAuthError

TIMEOUT_SECONDS = 5.0
MAX_BYTES = 64 * 1024
MAX_CACHE_SECONDS = 86_400
MAX_AGE = re.compile(r"max-age=(\d+)")


def _refused(why: str) -> OAuthError:
    return OAuthError("invalid_client", f"The client metadata document {why}.")


def is_public(address: str) -> bool:
    # ip_address reads an IPv6 zone ("fe80::1%eth0") itself
    ip = ipaddress.ip_address(address)
    return ip.is_global and not ip.is_multicast


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class GuardedResolver(AbstractResolver):
    """Resolves like the system, and refuses a host of any non-public
    address unless it is trusted."""

    def __init__(self, trusted: Collection[str]) -> None:
        self._trusted = {host.lower() for host in trusted}
        self._system = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._system.resolve(host, port, family)
        if host.lower() not in self._trusted and not all(
            is_public(result["host"]) for result in found
        ):
            raise _refused("is on a private or local address")
        return found

    async def close(self) -> None:
        await self._system.close()


def _cache_seconds(header: str | None) -> float:
    if header is None or "no-store" in header or "no-cache" in header:
        return 0
    found = MAX_AGE.search(header)
    return min(int(found.group(1)), MAX_CACHE_SECONDS) if found else 0


def _client(url: str, document: object, now: float) -> ClientRecord:
    if not isinstance(document, dict):
        raise _refused("is not a JSON object")
    fields = cast(dict[str, object], document)
    if fields.get("client_id") != url:
        raise _refused("names another client_id than its URL")
    uris = fields.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise _refused("lists no redirect_uris")
    listed: list[object] = list(uris)  # pyright: ignore[reportUnknownArgumentType]
    checked = [u for u in listed if isinstance(u, str) and not redirect_uri_problem(u)]
    if len(checked) != len(listed):
        raise _refused("lists a redirect URI that is not https or loopback http")
    if fields.get("token_endpoint_auth_method", "none") != "none":
        raise _refused("asks for a client secret; only public clients are served")
    name = fields.get("client_name")
    name = name if isinstance(name, str) and name.isprintable() else ""
    return ClientRecord(url, name[:200], tuple(checked), "metadata_document", now)


class ClientMetadataDocuments:
    def __init__(
        self,
        store: OAuthStore,
        *,
        trusted_hosts: Collection[str] = (),
        ca_file: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._trusted = tuple(trusted_hosts)
        self._tls = ssl.create_default_context()
        if ca_file is not None:
            self._tls.load_verify_locations(cafile=Path(ca_file))
        self._clock = clock
        self._cache: dict[str, tuple[float, ClientRecord]] = {}

    async def __call__(self, url: str) -> ClientRecord:
        now = self._clock()
        cached = self._cache.get(url)
        if cached is not None and cached[0] > now:
            return cached[1]
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or parts.fragment:
            raise _refused("URL must be https without a fragment")
        host = parts.hostname
        # An address in the URL is never resolved, so the resolver's guard
        # cannot see it: it is checked here.
        trusted = host.lower() in {h.lower() for h in self._trusted}
        if is_ip_literal(host) and not trusted and not is_public(host):
            raise _refused("is on a private or local address")
        body, cache_control = await self._fetch(url)
        try:
            document = json.loads(body)
        except ValueError:
            raise _refused("is not JSON") from None
        client = _client(url, document, now)
        self._store.save_client(client)
        seconds = _cache_seconds(cache_control)
        if seconds:
            self._cache[url] = (now + seconds, client)
        return client

    async def _fetch(self, url: str) -> tuple[bytes, str | None]:
        connector = aiohttp.TCPConnector(
            resolver=GuardedResolver(self._trusted), ssl=self._tls
        )
        timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
        try:
            async with (
                aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
                session.get(url, allow_redirects=False) as response,
            ):
                if response.status != 200:
                    raise _refused(f"answered HTTP {response.status}")
                body = bytearray()
                # read(n) answers what has arrived, up to n: read to the end
                # (or past the cap) rather than trusting one read.
                async for chunk in response.content.iter_chunked(16_384):
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise _refused("is larger than 64 KiB")
                return bytes(body), response.headers.get("cache-control")
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            if isinstance(exc.__cause__, OAuthError):
                raise exc.__cause__ from None
            raise _refused("could not be fetched") from None
