"""Upstream clients: one pooled ``httpx.AsyncClient`` per upstream, with bounded retries.

Retries happen only before the first byte reaches the client: on connect errors (and
connect timeouts), 429 and 5xx, with exponential backoff, at most ``max_retries`` times.
A read timeout is never retried (the upstream may already be working on the request).
The upstream API key is added here and nowhere else; :meth:`Upstream.scrub` removes it
from any text that could travel on (an upstream error message echoing it, say).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from interlock.gateway.config import UpstreamConfig
from interlock.gateway.dialects import Dialect
from interlock.gateway.http1 import Http1Transport
from interlock.gateway.metrics import Metrics

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.05
BACKOFF_CAP = 2.0


class UpstreamUnavailable(Exception):
    """The upstream could not be reached (502) or did not answer in time (504)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


@dataclass(slots=True)
class Upstream:
    """One configured upstream: its config, its dialect and its pooled HTTP client.

    Requests are built once per path and stream flag and reused (URL, headers with the
    key, timeouts): ``client.build_request`` re-parses the URL and merges headers on every
    call, which cost more than the rest of the upstream hop in profiles.
    """

    config: UpstreamConfig
    dialect: Dialect
    client: httpx.AsyncClient
    metrics: Metrics
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    _templates: dict[tuple[str, bool], httpx.Request] = field(
        default_factory=dict[tuple[str, bool], httpx.Request]
    )

    @property
    def name(self) -> str:
        """The upstream's config name."""
        return self.config.name

    def scrub(self, text: str) -> str:
        """``text`` with the upstream key (if any) masked."""
        key = self.config.api_key
        return text.replace(key, "***") if key and key in text else text

    def _request(self, path: str, body: bytes, accept_stream: bool) -> httpx.Request:
        """A POST of ``body`` to ``path`` as ``client.build_request`` would make it."""
        template = self._templates.get((path, accept_stream))
        if template is None:
            headers = {
                "content-type": "application/json",
                **self.dialect.auth_headers(self.config.api_key),
            }
            if accept_stream:
                headers["accept"] = "text/event-stream"
            template = self.client.build_request("POST", path, headers=headers)
            del template.headers["content-length"]
            self._templates[path, accept_stream] = template
        return httpx.Request(
            "POST",
            template.url,
            headers=template.headers,
            content=body,
            extensions=template.extensions,
        )

    async def send(self, path: str, body: bytes, *, accept_stream: bool) -> httpx.Response:
        """POST ``body`` to ``path``; the response is open (streaming) and must be closed.

        Raises :class:`UpstreamUnavailable` when no attempt got an answer. A 429/5xx answer
        is retried while attempts remain, then returned as is for the caller to translate.
        """
        attempt = 0
        while True:
            request = self._request(path, body, accept_stream)
            try:
                response = await self.client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as error:
                if attempt < self.config.max_retries:
                    attempt += 1
                    await self._backoff(attempt)
                    continue
                raise self._unavailable(error) from error
            except httpx.HTTPError as error:
                raise self._unavailable(error) from error
            if response.status_code in RETRYABLE_STATUS and attempt < self.config.max_retries:
                await response.aclose()
                attempt += 1
                await self._backoff(attempt, response.headers.get("retry-after"))
                continue
            return response

    async def _backoff(self, attempt: int, retry_after: str | None = None) -> None:
        self.metrics.upstream_retries[self.name] += 1
        delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1))
        if retry_after is not None:
            with contextlib.suppress(ValueError):
                delay = min(BACKOFF_CAP, max(delay, float(retry_after)))
        await self.sleep(delay)

    def _unavailable(self, error: httpx.HTTPError) -> UpstreamUnavailable:
        if isinstance(error, httpx.TimeoutException):
            self.metrics.upstream_errors[self.name, "timeout"] += 1
            return UpstreamUnavailable(504, "timeout", f"upstream {self.name} timed out")
        self.metrics.upstream_errors[self.name, "connect"] += 1
        return UpstreamUnavailable(502, "connect", f"upstream {self.name} is unreachable")


def http_client(
    config: UpstreamConfig, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The pooled client for ``config`` (``transport`` injects an ASGI app or a mock)."""
    timeout = httpx.Timeout(
        connect=config.connect_timeout, read=config.read_timeout, write=30.0, pool=30.0
    )
    limits = httpx.Limits(
        max_connections=config.max_connections, max_keepalive_connections=config.max_connections
    )
    if transport is None:
        # TCP_NODELAY: a request is one write, but a streamed answer's acknowledgements
        # must not wait for Nagle's algorithm either.
        transport = Http1Transport(
            max_connections=config.max_connections,
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
    base_url = config.base_url
    if config.emulated:
        base_url = "http://emulator" + ("" if config.protocol == "gemini" else "/v1")
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"), timeout=timeout, limits=limits, transport=transport
    )
