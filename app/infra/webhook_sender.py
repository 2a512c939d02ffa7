"""Deliveries over HTTP, under SSRF guards (aiohttp).

Unless its host is trusted (``WENCHANG_WEBHOOK_TRUSTED_HOSTS``), a delivery
goes only over https to a host whose every address is public: an address in
the URL is checked here, a name by the connector's resolver at connect time,
so a DNS answer cannot change between the check and the connect. No
redirects are followed; any answer but 2xx is a failed attempt.
"""

import socket
from collections.abc import Collection, Mapping
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from app.features.webhooks.domain import SEND_TIMEOUT_SECONDS
from app.features.webhooks.policy import is_public_address
from app.infra.oauth.client_metadata_documents import is_public

REFUSED = "refused: the destination is not a public address"


class RefusedDestination(OSError):
    pass


class PublicOnlyResolver(AbstractResolver):
    def __init__(self, trusted: Collection[str]) -> None:
        self._trusted = trusted
        self._system = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._system.resolve(host, port, family)
        if host.lower() not in self._trusted and not all(
            is_public(result["host"]) for result in found
        ):
            raise RefusedDestination(REFUSED)
        return found

    async def close(self) -> None:
        await self._system.close()


def _refused(failure: BaseException) -> bool:
    """Whether the resolver refused the destination: aiohttp wraps the refusal
    in its own connection error (as its cause), whose text leaves it out."""
    cause: BaseException | None = failure
    while cause is not None:
        if isinstance(cause, RefusedDestination):
            return True
        cause = cause.__cause__
    return False


class HttpWebhookSender:
    """One aiohttp session for every delivery of this process."""

    def __init__(self, trusted: Collection[str]) -> None:
        self._trusted = frozenset(host.lower() for host in trusted)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(resolver=PublicOnlyResolver(self._trusted))
            timeout = aiohttp.ClientTimeout(total=SEND_TIMEOUT_SECONDS)
            self._session = aiohttp.ClientSession(connector=connector, timeout=timeout)
        return self._session

    def refusal(self, url: str) -> str:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if host in self._trusted:
            return ""
        if parts.scheme != "https" or is_public_address(host) is False:
            return REFUSED
        return ""

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> str:
        refused = self.refusal(url)
        if refused:
            return refused
        try:
            async with self._client().post(
                url, data=body, headers=dict(headers), allow_redirects=False
            ) as response:
                await response.read()
                if 200 <= response.status < 300:
                    return ""
                return f"the receiver answered HTTP {response.status}"
        except RefusedDestination:
            return REFUSED
        except TimeoutError:
            return f"no answer within {SEND_TIMEOUT_SECONDS:g} s"
        except (aiohttp.ClientError, OSError) as failure:
            if _refused(failure):
                return REFUSED
            return f"could not connect: {type(failure).__name__}"

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
