"""Upstream clients: one pooled HTTP transport per upstream, with bounded retries.

Each :class:`Upstream` sends through one ``httpx`` transport: by default the pooled
:class:`~interlock.gateway.http1.Http1Transport` (or ``httpx``'s own, through a proxy
named by the usual ``HTTPS_PROXY`` / ``NO_PROXY`` variables); tests inject an
``httpx.MockTransport``, ``emulator://`` upstreams an ``httpx.ASGITransport``. Requests go
to the transport directly, not through an ``httpx.AsyncClient``: the client re-parses the
URL, merges headers and runs its cookie jar over every answer, which cost more than the
rest of the upstream hop in profiles, and a cookie jar shared by every tenant has no
place in a gateway anyway.

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
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import cast

import httpx

from interlock.codecs.registry import http_facts
from interlock.gateway import tracing
from interlock.gateway.config import UpstreamConfig
from interlock.gateway.dialects import Dialect
from interlock.gateway.http1 import (
    PREPARED_HEAD,
    AnswerBody,
    AnswerHeadTooLarge,
    Http1Transport,
    Origin,
    origin_of,
)
from interlock.gateway.metrics import Metrics

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
CLEAN_FAILURES = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport failures before the request was written: safe to send again."""
BACKOFF_BASE = 0.05
BACKOFF_CAP = 2.0
WRITE_TIMEOUT = 30.0
POOL_TIMEOUT = 30.0
USER_AGENT = "interlock"


class UpstreamUnavailable(Exception):
    """The upstream could not be reached (502) or did not answer in time (504).

    ``clean`` is True when the request was certainly not written (a connect error or
    timeout, no free connection): sending it elsewhere cannot run it twice.
    """

    def __init__(self, status: int, kind: str, message: str, *, clean: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.clean = clean


@dataclass(slots=True, frozen=True)
class _Template:
    """What every request to one path shares: URL, headers (without the length), timeouts."""

    url: httpx.URL
    headers: httpx.Headers
    extensions: dict[str, object]
    """The timeouts, and the request line and headers as :class:`Http1Transport` writes
    them (:data:`~interlock.gateway.http1.PREPARED_HEAD`)."""
    timeouts: dict[str, object]
    """The timeouts alone (for requests built otherwise: :meth:`Upstream.fetch`)."""
    head: bytes
    """The request line and headers, without the ``content-length`` line."""
    origin: Origin
    request: httpx.Request
    """The request without its body: what errors and answers of :meth:`Upstream.send`'s
    lean path name (method, URL, headers)."""


@dataclass(slots=True)
class Upstream:
    """One configured upstream: its config, its dialect and its pooled transport."""

    config: UpstreamConfig
    dialect: Dialect
    transport: httpx.AsyncBaseTransport
    metrics: Metrics
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    _templates: dict[tuple[str, bool], _Template] = field(
        default_factory=dict[tuple[str, bool], _Template]
    )

    @property
    def name(self) -> str:
        """The upstream's config name."""
        return self.config.name

    def scrub(self, text: str) -> str:
        """``text`` with the upstream key (if any) masked."""
        key = self.config.api_key
        return text.replace(key, "***") if key and key in text else text

    def _template(self, path: str, accept_stream: bool) -> _Template:
        template = self._templates.get((path, accept_stream))
        if template is None:
            url = httpx.URL(base_url(self.config) + path)
            headers = httpx.Headers(
                {
                    "host": url.netloc.decode("ascii"),
                    "content-type": "application/json",
                    "user-agent": USER_AGENT,
                    **self.dialect.auth_headers(self.config.api_key),
                }
            )
            if accept_stream:
                headers["accept"] = "text/event-stream"
            timeout = {
                "connect": self.config.connect_timeout,
                "read": self.config.read_timeout,
                "write": WRITE_TIMEOUT,
                "pool": POOL_TIMEOUT,
            }
            lines = b"".join(b"%s: %s\r\n" % pair for pair in headers.raw)
            head = b"POST %s HTTP/1.1\r\n%s" % (url.raw_path, lines)
            timeouts: dict[str, object] = {"timeout": timeout}
            extensions = {**timeouts, PREPARED_HEAD: head}
            bodiless = httpx.Request("POST", url, headers=headers, extensions=extensions)
            origin = origin_of(url)
            template = _Template(url, headers, extensions, timeouts, head, origin, bodiless)
            self._templates[path, accept_stream] = template
        return template

    def _request(self, path: str, body: bytes, accept_stream: bool) -> httpx.Request:
        """A POST of ``body`` to ``path`` (relative to the upstream's base URL)."""
        template = self._template(path, accept_stream)
        headers = httpx.Headers(template.headers)
        headers["content-length"] = str(len(body))
        request = httpx.Request(
            "POST",
            template.url,
            headers=headers,
            stream=httpx.ByteStream(body),
            extensions=template.extensions,
        )
        request.read()  # the body is in memory: make ``request.content`` available
        return request

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self.transport.aclose()

    async def send(self, path: str, body: bytes, *, accept_stream: bool) -> httpx.Response:
        """POST ``body`` to ``path``; the response is open (streaming) and must be closed.

        Raises :class:`UpstreamUnavailable` when no attempt got an answer. A 429/5xx answer
        is retried while attempts remain, then returned as is for the caller to translate.
        """
        transport = self.transport
        if type(transport) is not Http1Transport or tracing.active() is not None:
            return await self._attempts(lambda: self._request(path, body, accept_stream))
        template = self._template(path, accept_stream)
        head = b"%scontent-length: %d\r\n\r\n" % (template.head, len(body))
        payload = [head, body]  # what Http1Transport writes for ``_request``'s request
        timeouts = cast(dict[str, float | None], template.timeouts["timeout"])
        origin, request = template.origin, template.request
        return await self._attempts(
            lambda: request, lambda _: transport.post(origin, payload, timeouts, request)
        )

    async def fetch(self, method: str, path: str, body: bytes | None = None) -> httpx.Response:
        """A ``GET``, ``DELETE`` or ``POST`` of ``path`` (query included), with a JSON
        ``body`` when given, retried as :meth:`send` is; the response is open."""
        url = httpx.URL(base_url(self.config) + path)
        headers = {
            "host": url.netloc.decode("ascii"),
            "user-agent": USER_AGENT,
            **self.dialect.auth_headers(self.config.api_key),
        }
        if body is not None:
            headers["content-type"] = "application/json"
        extensions = self._template(self.dialect.http.upstream_path, False).timeouts
        return await self._attempts(
            lambda: httpx.Request(method, url, headers=headers, content=body, extensions=extensions)
        )

    async def _attempts(
        self,
        build: Callable[[], httpx.Request],
        exchange: Callable[[httpx.Request], Awaitable[httpx.Response]] | None = None,
    ) -> httpx.Response:
        """Each attempt sends ``build()`` (through ``exchange`` when given)."""
        attempt = 0
        while True:
            request = build()
            try:
                if exchange is not None:
                    response = await exchange(request)
                else:
                    response = await self._exchange(request, attempt)
            except CLEAN_FAILURES as error:
                if attempt < self.config.max_retries:
                    attempt += 1
                    await self._backoff(attempt)
                    continue
                raise self._unavailable(error) from error
            except httpx.HTTPError as error:
                raise self._unavailable(error) from error
            response.request = request
            if response.status_code in RETRYABLE_STATUS and attempt < self.config.max_retries:
                await response.aclose()
                attempt += 1
                await self._backoff(attempt, response.headers.get("retry-after"))
                continue
            return response

    async def _exchange(self, request: httpx.Request, attempt: int) -> httpx.Response:
        """One HTTP attempt (a ``POST`` span of its own when tracing is on)."""
        if tracing.active() is None:
            return await self.transport.handle_async_request(request)
        url = request.url
        attributes: tracing.Attributes = {
            "http.request.method": request.method,
            "server.address": url.host,
            "server.port": url.port or (443 if url.scheme == "https" else 80),
            "url.full": str(url),
            "interlock.upstream": self.name,
        }
        if attempt:
            attributes = {**attributes, "http.request.resend_count": attempt}
        with tracing.span(request.method, "client", attributes) as span:
            response = await self.transport.handle_async_request(request)
            span.set({"http.response.status_code": response.status_code})
            if response.status_code >= 400:
                span.fail(str(response.status_code))
            return response

    async def _backoff(self, attempt: int, retry_after: str | None = None) -> None:
        self.metrics.upstream_retries[self.name, "same_deployment"] += 1
        delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1))
        if retry_after is not None:
            with contextlib.suppress(ValueError):
                delay = min(BACKOFF_CAP, max(delay, float(retry_after)))
        await self.sleep(delay)

    def unavailable(self, error: httpx.HTTPError) -> UpstreamUnavailable:
        """``error`` (a transport failure talking to this upstream) classified and counted."""
        return self._unavailable(error)

    def _unavailable(self, error: httpx.HTTPError) -> UpstreamUnavailable:
        unavailable = self._classify(error)
        unavailable.clean = isinstance(error, CLEAN_FAILURES)
        return unavailable

    def _classify(self, error: httpx.HTTPError) -> UpstreamUnavailable:
        if isinstance(error, AnswerHeadTooLarge):
            self.metrics.upstream_errors[self.name, "too_large"] += 1
            return UpstreamUnavailable(502, "too_large", f"upstream {self.name}: {error}")
        if isinstance(error, httpx.TimeoutException):
            self.metrics.upstream_errors[self.name, "timeout"] += 1
            return UpstreamUnavailable(504, "timeout", f"upstream {self.name} timed out")
        if isinstance(error, httpx.ConnectError):
            self.metrics.upstream_errors[self.name, "connect"] += 1
            return UpstreamUnavailable(502, "connect", f"upstream {self.name} is unreachable")
        self.metrics.upstream_errors[self.name, "protocol"] += 1
        return UpstreamUnavailable(
            502, "protocol", f"upstream {self.name} failed: {self.scrub(str(error))}"
        )


def body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """An upstream answer's body as it arrives, run through a decoder only when compressed.

    Requests ask for no compression, so the body is normally read straight from the
    transport's stream: ``httpx``'s reading machinery (decoder chain, chunker, header
    lookups that re-detect the headers' encoding) cost more than the rest of reading a
    small answer. A response built in memory (a mock's) is read already.
    """
    stream = response.stream
    if isinstance(stream, AnswerBody) and stream.plain and not response.is_stream_consumed:
        response.is_stream_consumed = True
        return stream.__aiter__()
    if (
        response.is_stream_consumed
        or not isinstance(stream, httpx.AsyncByteStream)
        or any(name.lower() == b"content-encoding" for name, _ in response.headers.raw)
    ):
        return response.aiter_bytes()
    response.is_stream_consumed = True
    return stream.__aiter__()


class AnswerTooLarge(Exception):
    """An upstream answer's body exceeded the upstream's ``max_response_bytes``."""


async def read_answer(response: httpx.Response, limit: int) -> bytes:
    """An upstream answer's whole body (at most ``limit`` bytes, else :class:`AnswerTooLarge`);
    the response is closed afterwards."""
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in body_chunks(response):
            size += len(chunk)
            if size > limit:
                raise AnswerTooLarge(f"the upstream answer exceeds the limit of {limit} bytes")
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        await close(response)


async def close(response: httpx.Response) -> None:
    """``response.aclose()``; an :class:`AnswerBody` (whose closing cannot fail) is closed
    directly, without ``httpx``'s context for naming the request in errors."""
    stream = response.stream
    if type(stream) is AnswerBody and not response.is_closed:
        response.is_closed = True
        await stream.aclose()
        return
    await response.aclose()


def base_url(config: UpstreamConfig) -> str:
    """The URL that upstream paths are relative to (no trailing slash)."""
    if config.emulated:
        return "http://emulator" + http_facts(config.protocol).emulator_prefix
    return config.base_url.rstrip("/")


def upstream_transport(config: UpstreamConfig) -> httpx.AsyncBaseTransport:
    """The pooled transport for ``config``: httpx's own when configured or when the
    environment names a proxy for it, else the lean :class:`Http1Transport`."""
    # TCP_NODELAY: a request is one write, but nothing a stream sends back may wait for
    # Nagle's algorithm either.
    options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    proxy = environment_proxy(httpx.URL(base_url(config)))
    if proxy is not None or config.transport == "httpx":
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
        )
        return httpx.AsyncHTTPTransport(proxy=proxy, limits=limits, socket_options=options)
    return Http1Transport(
        max_connections=config.max_connections,
        max_header_bytes=config.max_header_bytes,
        socket_options=options,
    )


def environment_proxy(url: httpx.URL) -> str | None:
    """The proxy ``HTTP(S)_PROXY`` / ``ALL_PROXY`` name for ``url``, unless ``NO_PROXY`` exempts it."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy
