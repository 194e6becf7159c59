"""A lean HTTP/1.1 keep-alive transport under each upstream's ``httpx.AsyncClient``.

httpcore's pool re-examines every pooled connection (one ``poll()`` system call each) on
every request and on every response close; in profiles of a gateway worker that was more
than half its CPU per proxied request (``docs/benchmarks/proxy.md``). This transport keeps
idle connections on a LIFO stack, learns that a server closed one from asyncio's
``connection_lost`` callback (no system call), writes each request with one ``write`` and
parses answers with httptools (llhttp, the parser uvicorn uses).

Invariants:

* a connection is on the idle stack only when its last answer was read to the end and both
  sides allow keep-alive; one request at a time per connection (no pipelining);
* at most ``max_connections`` exchanges are open at once (from sending until the response
  body is closed); more wait, up to the pool timeout (:class:`httpx.PoolTimeout`);
* a request is never written twice. Only a request that provably never left (its reused
  connection was already known closed before the first byte was written) goes on a new
  connection instead; once written, a connection closed without an answer is a
  :class:`httpx.RemoteProtocolError`, because the server may have processed it (a POST
  to a model is billed). Go's ``net/http`` resends such a request only when it is
  idempotent or carries an idempotency key; the gateway's requests are neither. Every
  other failure raises the matching :class:`httpx.TransportError`;
* an answer's head (status line and headers) larger than ``max_header_bytes`` is refused
  (:class:`AnswerHeadTooLarge`) without buffering more of it;
* an idle connection is reused for at most ``keepalive_expiry`` seconds and closed within
  about that time of going idle, whether or not traffic follows (one timer per transport
  sweeps the expired ones);
* HTTP only as the gateway uses it: no ``Upgrade``, no HTTP/2, no proxies (an upstream
  behind one gets ``httpx``'s own transport, see ``upstream.upstream_transport``).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator, Iterable
from itertools import chain
from operator import itemgetter
from types import TracebackType
from typing import cast

import httptools  # pyright: ignore[reportMissingTypeStubs]
import httpx

Origin = tuple[bytes, bytes, int]
SocketOption = tuple[int, int, int]

READ_HIGH_WATER = 256 * 1024
"""Buffered answer bytes past which reading pauses until the consumer catches up."""
PREPARED_HEAD = "interlock.prepared_head"
"""A request extension: the request line and headers as written, without the
``content-length`` line and the blank line ending the head, for a request whose body is an
``httpx.ByteStream`` and whose headers are those bytes plus its ``content-length`` last
(``Upstream`` builds both from the same template). :func:`_serialize` writes it instead of
walking the headers."""


class _ClosedBeforeAnswer(Exception):
    """The server closed the connection before sending any byte of an answer."""


class _NeverSent(Exception):
    """The connection was closed before the request's first byte was written."""


class AnswerHeadTooLarge(httpx.RemoteProtocolError):
    """The answer's status line and headers exceed the transport's ``max_header_bytes``."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: feeds llhttp, wakes the one exchange waiting on it."""

    def __init__(self, max_header_bytes: int = 64 * 1024) -> None:
        self.max_header_bytes = max_header_bytes
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)  # pyright: ignore[reportUnknownMemberType]
        self.closed = False
        self.idle_since = 0.0
        self.in_flight = False
        self.head_only = False
        self.write_paused = False
        self.read_paused = False
        self.drained: asyncio.Future[None] | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.deadline = 0.0
        """When the current wait times out (loop time), with :attr:`waiting_for`."""
        self.waiting_for: httpx.Request | None = None
        self.read_timer: asyncio.TimerHandle | None = None
        """The one read-timeout timer: armed when a wait starts and none is armed for
        that deadline or before; when it fires it checks the current wait's deadline."""
        self.read_timer_at = 0.0
        self.start()

    def start(self) -> None:
        """Reset the per-answer state before a request goes out."""
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.until_close = False
        self.received_any = False
        self.head_bytes = 0
        """Sizes of the header lines parsed so far."""
        self.ascii_head = False
        """Every header name and value is ASCII (``httpx`` then need not find the encoding)."""
        self.encoded = False
        """The answer names a ``content-encoding``."""
        self.head_received = 0
        """Bytes received while the head was still incomplete (bounds what llhttp buffers)."""
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.error: Exception | None = None
        self.header_list: list[tuple[bytes, bytes, bytes]] = []
        """The answer's headers as ``httpx.Headers`` keeps them: (name, lower-case, value)."""

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it
        self.transport = cast(asyncio.Transport, transport)
        self.loop = asyncio.get_running_loop()

    def data_received(self, data: bytes) -> None:
        if not self.in_flight:  # bytes nobody asked for: the connection is unusable
            self.close()
            return
        self.received_any = True
        try:
            self.parser.feed_data(data)  # pyright: ignore[reportUnknownMemberType]
        except httptools.HttpParserError as error:  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
            self.error = httpx.RemoteProtocolError(f"malformed HTTP answer: {error}")
            self.close()
        if not self.headers_done and self.error is None:
            self.head_received += len(data)  # all of it was head: the head is not over yet
            self._check_head()
        if isinstance(self.error, AnswerHeadTooLarge):
            self.close()
        self._wake()

    def _check_head(self) -> None:
        too_large = max(self.head_bytes, self.head_received) > self.max_header_bytes
        if too_large and self.error is None:
            self.error = AnswerHeadTooLarge(
                f"the answer's headers exceed the limit of {self.max_header_bytes} bytes"
            )

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._stop_read_timer()
        if self.headers_done and self.until_close and not self.complete:
            self.complete = True  # a body delimited by the end of the connection
        elif self.in_flight and not self.complete and self.error is None:
            self.error = (
                httpx.ReadError(f"the server closed the connection mid-answer ({exc or 'EOF'})")
                if self.received_any
                else _ClosedBeforeAnswer()
            )
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    # -- llhttp callbacks ---------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        headers = self.headers
        # The head's size as its lines count it (name, ": ", value, CRLF): checked here,
        # once, rather than per header; a head still incomplete is bounded by the bytes
        # received (data_received), so either way no more than the limit is kept.
        if self.error is None:
            self.head_bytes += sum(map(len, chain.from_iterable(headers))) + 4 * len(headers)
            if self.head_bytes > self.max_header_bytes:
                self._check_head()
        status = int(self.parser.get_status_code())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        if 100 <= status < 200:  # informational answers precede the real one
            self.headers = []
            return
        if self.error is not None:
            return  # refused (too large): no answer to hand on
        self.status = status
        self.headers_done = True
        names = list(map(_NAME, headers))
        lowered = list(map(bytes.lower, names))
        self.until_close = b"content-length" not in lowered and b"transfer-encoding" not in lowered
        self.encoded = b"content-encoding" in lowered
        self.ascii_head = b"".join(chain.from_iterable(headers)).isascii()
        self.header_list = list(zip(names, lowered, map(_VALUE, headers), strict=True))
        if self.head_only:
            self.complete = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > READ_HIGH_WATER and not self.read_paused and self.transport:
            self.read_paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        if not self.headers_done:
            return  # the end of an informational answer
        self.complete = True
        self.keep_alive = bool(self.parser.should_keep_alive())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]

    # -- used by the transport ----------------------------------------------------------

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, within: float | None, request: httpx.Request) -> None:
        """Until the next callback of interest, or :class:`httpx.ReadTimeout` after
        ``within`` seconds.

        The timeout is a deadline the connection's one read timer checks (armed when none
        is armed for that deadline or before) rather than a timer per wait: a wait
        answered in time leaves the timer as it is, and a timer firing early (armed for
        an earlier wait) is armed again for the current wait's deadline.
        """
        loop = self.loop
        waiter = self.waiter = loop.create_future()
        if within is not None:
            self.deadline = deadline = loop.time() + within
            self.waiting_for = request
            if self.read_timer is None or self.read_timer_at > deadline:
                self._arm_read_timer(deadline)
        try:
            await waiter
        finally:
            self.waiter = None
            self.waiting_for = None

    def _arm_read_timer(self, deadline: float) -> None:
        if self.read_timer is not None:
            self.read_timer.cancel()
        self.read_timer_at = deadline
        self.read_timer = self.loop.call_at(deadline, self._read_due)

    def _read_due(self) -> None:
        self.read_timer = None
        waiter, request = self.waiter, self.waiting_for
        if waiter is None or request is None or waiter.done():
            return  # no timed wait now: armed again by the next one
        if self.loop.time() >= self.deadline:
            _expire(waiter, request)
        else:
            self._arm_read_timer(self.deadline)

    def _stop_read_timer(self) -> None:
        if self.read_timer is not None:
            self.read_timer.cancel()
            self.read_timer = None

    async def send(
        self, payload: list[bytes], within: float | None, request: httpx.Request
    ) -> None:
        """Write one request (its pieces in one ``writev`` under uvloop, joined otherwise);
        waits (up to the write timeout) if the socket buffer is full."""
        if self.closed or self.transport is None or self.transport.is_closing():
            raise _NeverSent()
        self.start()
        self.in_flight = True
        self.head_only = request.method == "HEAD"
        self.transport.writelines(payload)
        if self.write_paused:
            self.drained = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(within):
                    await self.drained
            except TimeoutError:
                self.close()
                raise httpx.WriteTimeout("writing the request timed out", request=request) from None
            finally:
                self.drained = None

    def take(self) -> bytes:
        """The body bytes buffered so far (resuming reading if it was paused)."""
        data = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        if self.read_paused and self.transport is not None:
            self.read_paused = False
            self.transport.resume_reading()
        return data

    @property
    def reusable(self) -> bool:
        """True when the last answer ended cleanly and the connection may carry another."""
        return (
            self.complete
            and self.keep_alive
            and not self.closed
            and not self.head_only
            and not self.chunks
        )

    def close(self) -> None:
        self.closed = True
        self._stop_read_timer()
        if self.transport is not None:
            self.transport.close()


def _expire(waiter: asyncio.Future[None], request: httpx.Request) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("the upstream answer timed out", request=request))


class AnswerHeaders(httpx.Headers):
    """An answer's headers, made from llhttp's (name, value) pairs without ``httpx``'s
    normalisation of each one: what ``httpx.Headers(pairs)`` holds for byte pairs is
    ``(name, name.lower(), value)`` each (``tests/gateway/test_http1.py`` compares
    them). An ASCII head gets the encoding ``httpx`` would find, header by header."""

    def __init__(self, header_list: list[tuple[bytes, bytes, bytes]], ascii_head: bool) -> None:
        super().__init__()
        self._list = header_list
        if ascii_head:
            self.encoding = "ascii"


class AnswerBody(httpx.AsyncByteStream):
    """The answer body as it arrives; closing it hands the connection back (or closes it)."""

    def __init__(
        self,
        transport: Http1Transport,
        connection: _Connection,
        origin: Origin,
        request: httpx.Request,
        timeout: float | None,
    ) -> None:
        self._transport = transport
        self._connection = connection
        self._origin = origin
        self._request = request
        self._timeout = timeout
        self._closed = False
        self.plain = not connection.encoded
        """The body comes as sent: no ``content-encoding`` to undo (``upstream.body_chunks``)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            if connection.chunks:
                yield connection.take()
            elif connection.complete:
                return
            elif connection.error is not None:
                error = connection.error
                if isinstance(error, _ClosedBeforeAnswer):
                    error = httpx.ReadError("the server closed the connection")
                raise error
            else:
                await connection.wait(self._timeout, self._request)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport.release(self._origin, self._connection)


class _Slots:
    """``asyncio.Semaphore``'s algorithm (a released slot goes to the first waiter still
    waiting, else back to the count) with a synchronous :meth:`take` for a free slot.

    Invariant: ``value`` plus the slots held never exceeds the initial value; a waiter
    handed a slot it can no longer use (cancelled, timed out) passes it on.
    """

    __slots__ = ("value", "waiters")

    def __init__(self, value: int) -> None:
        self.value = value
        self.waiters: deque[asyncio.Future[None]] = deque()

    def take(self) -> bool:
        """Take a slot if one is free and nobody waits for one."""
        if self.value > 0 and not self.waiters:
            self.value -= 1
            return True
        return False

    async def wait(self, within: float | None) -> None:
        """Take a slot, waiting for one up to ``within`` seconds (``TimeoutError``)."""
        if self.take():
            return
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            try:
                async with asyncio.timeout(within):
                    await waiter
            finally:
                self.waiters.remove(waiter)
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot as it gave up: the next waiter gets it
            raise

    def release(self) -> None:
        """Give a slot back: to the first waiter still waiting, else to the count."""
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
                return
        self.value += 1


KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is reused: below the 5 s after which uvicorn and Node.js
servers close an idle keep-alive connection by default, so the gateway does not write a
request onto a connection the server is closing at that moment (a request written is never
resent, so that race would be a 502)."""


class Http1Transport(httpx.AsyncBaseTransport):
    """Pooled HTTP/1.1 to any number of origins (see the module invariants)."""

    def __init__(
        self,
        *,
        max_connections: int = 100,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
        max_header_bytes: int = 64 * 1024,
        socket_options: Iterable[SocketOption] = (),
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._max_header_bytes = max_header_bytes
        self._sweep: asyncio.TimerHandle | None = None
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._slots = _Slots(max_connections)
        self._keepalive_expiry = keepalive_expiry
        self._socket_options = tuple(socket_options)
        self._ssl_context = ssl_context
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return as soon as the answer's headers are in."""
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        if not self._slots.take():
            await self._acquire(timeouts.get("pool"), request)
        try:
            payload = await _serialize(request)
        except BaseException:
            self._slots.release()
            raise
        return await self._answer(origin_of(request.url), payload, timeouts, request)

    async def post(
        self,
        origin: Origin,
        payload: list[bytes],
        timeouts: dict[str, float | None],
        request: httpx.Request,
    ) -> httpx.Response:
        """:meth:`handle_async_request` for a request already serialized: ``payload`` (the
        head and the body, written as they are) to ``origin``, no ``httpx.Request`` built
        per call. ``request`` names the request in errors and on the response (its method,
        URL and headers; its body is not read)."""
        if not self._slots.take():
            await self._acquire(timeouts.get("pool"), request)
        return await self._answer(origin, payload, timeouts, request)

    async def _answer(
        self,
        origin: Origin,
        payload: list[bytes],
        timeouts: dict[str, float | None],
        request: httpx.Request,
    ) -> httpx.Response:
        """Send ``payload`` holding a pool slot (released here on failure, else when the
        body is closed); the response once its headers are in."""
        try:
            connection = self._checkout(origin)
            try:
                if connection is not None:
                    try:
                        await self._exchange(connection, payload, timeouts, request)
                    except _NeverSent:  # closed while idle: nothing left, so a fresh one
                        connection = None
                if connection is None:
                    connection = await self._connect(origin, timeouts.get("connect"), request)
                    await self._exchange(connection, payload, timeouts, request)
            except (_ClosedBeforeAnswer, _NeverSent):
                raise httpx.RemoteProtocolError(
                    "the server closed the connection without answering", request=request
                ) from None
        except BaseException:
            self._slots.release()
            raise
        body = AnswerBody(self, connection, origin, request, timeouts.get("read"))
        response = httpx.Response(connection.status, stream=body, extensions=_EXTENSIONS)
        response.headers = AnswerHeaders(connection.header_list, connection.ascii_head)
        return response

    async def _exchange(
        self,
        connection: _Connection,
        payload: list[bytes],
        timeouts: dict[str, float | None],
        request: httpx.Request,
    ) -> None:
        """Write the request and wait for the answer's headers."""
        try:
            await connection.send(payload, timeouts.get("write"), request)
            while not connection.headers_done:
                if connection.error is not None:
                    raise connection.error
                await connection.wait(timeouts.get("read"), request)
        except BaseException:
            self._forget(connection)
            raise

    async def _acquire(self, within: float | None, request: httpx.Request) -> None:
        """Wait for a slot (none was free), up to ``within`` seconds."""
        try:
            await self._slots.wait(within)
        except TimeoutError:
            raise httpx.PoolTimeout("no upstream connection became free", request=request) from None

    def _checkout(self, origin: Origin) -> _Connection | None:
        stack = self._idle.get(origin)
        if not stack:
            return None
        deadline = stack[-1].loop.time() - self._keepalive_expiry  # the loop serving them
        while stack:
            connection = stack.pop()
            if not connection.closed and connection.idle_since >= deadline:
                return connection
            self._forget(connection)
        return None

    async def _connect(
        self, origin: Origin, within: float | None, request: httpx.Request
    ) -> _Connection:
        scheme, host, port = origin
        if self._closed:
            raise httpx.ConnectError("the transport is closed", request=request)
        context = self._tls() if scheme == b"https" else None
        hostname = host.decode("ascii")
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(within):
                _, connection = await loop.create_connection(
                    lambda: _Connection(self._max_header_bytes),
                    hostname,
                    port,
                    ssl=context,
                    server_hostname=hostname if context else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"connecting to {hostname}:{port} timed out", request=request
            ) from None
        except OSError as error:
            raise httpx.ConnectError(
                f"cannot connect to {hostname}:{port}: {error}", request=request
            ) from error
        if connection.transport is not None:
            sock = connection.transport.get_extra_info("socket")
            for option in self._socket_options:
                sock.setsockopt(*option)
        self._open.add(connection)
        return connection

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:  # loading the CA bundle takes a while: only when needed
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context

    def release(self, origin: Origin, connection: _Connection) -> None:
        """Called once per exchange when its body is closed."""
        self._slots.release()
        connection.in_flight = False
        if not connection.reusable or self._closed:
            self._forget(connection)
            return
        loop = connection.loop
        connection.idle_since = loop.time()
        stack = self._idle.setdefault(origin, deque())
        stack.append(connection)
        if self._sweep is None:
            self._sweep = loop.call_later(self._keepalive_expiry, self._expire_idle)

    def _expire_idle(self) -> None:
        """Close the idle connections past their expiry; run again for the next to expire.

        The oldest idle connections sit at the bottom of each stack. Without this timer a
        burst's connections would stay open until a later burst needed as many again.
        """
        self._sweep = None
        now = asyncio.get_running_loop().time()
        deadline = now - self._keepalive_expiry
        oldest: float | None = None
        for stack in self._idle.values():
            while stack and (stack[0].closed or stack[0].idle_since <= deadline):
                self._forget(stack.popleft())
            if stack:
                since = stack[0].idle_since
                oldest = since if oldest is None else min(oldest, since)
        if oldest is not None and not self._closed:
            delay = max(oldest + self._keepalive_expiry - now, 0.0) + 0.01
            self._sweep = asyncio.get_running_loop().call_later(delay, self._expire_idle)

    def _forget(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)

    async def aclose(self) -> None:
        """Close every connection, idle or not."""
        self._closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._idle.clear()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


_NAME = itemgetter(0)
_VALUE = itemgetter(1)

_EXTENSIONS = {"http_version": b"HTTP/1.1"}
"""Every answer's extensions (``httpx.Response`` copies them)."""


def origin_of(url: httpx.URL) -> Origin:
    """Scheme, host and port of ``url``: which pooled connections may carry a request."""
    return (url.raw_scheme, url.raw_host, _port(url))


def _port(url: httpx.URL) -> int:
    if url.port is not None:
        return url.port
    return 443 if url.raw_scheme == b"https" else 80


async def _serialize(request: httpx.Request) -> list[bytes]:
    """Request line and headers as one buffer, then the body as it is (not copied): both
    go out in one write (no Nagle stall)."""
    prepared = request.extensions.get(PREPARED_HEAD)
    if isinstance(prepared, bytes) and isinstance(request.stream, httpx.ByteStream):
        content = request.content
        return [b"%scontent-length: %d\r\n\r\n" % (prepared, len(content)), content]
    head = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    chunked = False
    for name, value in request.headers.raw:
        head += (name, b": ", value, b"\r\n")
        chunked = chunked or (name.lower() == b"transfer-encoding" and value.lower() == b"chunked")
    head.append(b"\r\n")
    if isinstance(request.stream, httpx.ByteStream):
        return [b"".join(head), request.content]
    body: list[bytes] = []
    stream = request.stream
    assert isinstance(stream, httpx.AsyncByteStream), "an async client sends async bodies"
    async for chunk in stream:
        if chunk:
            body += (b"%x\r\n" % len(chunk), chunk, b"\r\n") if chunked else (chunk,)
    if chunked:
        body.append(b"0\r\n\r\n")
    return [b"".join(head), b"".join(body)]
