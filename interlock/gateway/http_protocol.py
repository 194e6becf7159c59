"""The gateway's HTTP/1.1 server protocol: request bodies handed on as they arrived.

uvicorn's ``httptools`` protocol gathers a request body in a ``bytearray`` (``+=`` copies
every chunk in) and hands it to the app as ``bytes(bytearray)`` (a second copy of all of
it). A 200 KB tool result was copied twice more that way before the gateway read a byte
of it. :class:`GatewayHttpProtocol` keeps the chunks llhttp gave instead
(:class:`BodyChunks`), and a body that arrived in one chunk reaches the app as that very
``bytes`` object; several chunks are joined once.

Everything else is :class:`~interlock.gateway.agui.StallLimitedHttpProtocol` (uvicorn's
protocol with the write stall limit): flow control (reading pauses past uvicorn's high
water mark of buffered body, resumes when the app asks for more), ``Expect:
100-continue``, pipelining, disconnects.

An answer whose length is known (``content-length``, not ``HEAD``) goes out in one write
with its first body bytes: uvicorn writes the head as soon as the app starts the answer and
the body separately (two system calls, and often two wake-ups for the client), so each
request cycle writes through :class:`HeadWithBody`, which holds the head until the body's
first bytes (or a close) come.

Invariants: the client receives the same bytes as from uvicorn's own protocol, in the same
order (a held head goes out before anything else, a close included); the app receives the
same bytes, in the same ``http.request`` messages, as from uvicorn's own protocol; uvicorn (pinned below 0.55 in ``pyproject.toml``) only ever does
``+=``, ``len()`` and ``bytes()`` on the cycle's pending body, and sets it back to an
empty ``bytearray`` once handed on, which the next chunk replaces again.
"""

from __future__ import annotations

import asyncio
import contextvars
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any, cast

import httptools  # pyright: ignore[reportMissingTypeStubs]
from uvicorn._types import ASGI3Application, ASGISendEvent
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    RequestResponseCycle,
)

from interlock.gateway.agui import StallLimitedHttpProtocol


class BodyChunks:
    """Request body bytes received and not yet handed to the app, as received."""

    __slots__ = ("chunks", "size")

    def __init__(self, pending: bytes | bytearray = b"") -> None:
        """Starting with ``pending`` (what uvicorn's own ``bytearray`` held, if anything)."""
        self.chunks: list[bytes] = [bytes(pending)] if pending else []
        self.size = len(pending)

    def __iadd__(self, chunk: bytes) -> BodyChunks:
        self.chunks.append(chunk)
        self.size += len(chunk)
        return self

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        """The body so far: the one chunk itself (no copy), or the chunks joined once."""
        chunks = self.chunks
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class GatewayHttpProtocol(StallLimitedHttpProtocol):
    """uvicorn's ``httptools`` protocol (with the write stall limit) keeping request body
    chunks uncopied (see the module docstring)."""

    def on_body(self, body: bytes) -> None:
        cycle = cast(Any, self.cycle)  # uvicorn types the pending body as a bytearray
        if not isinstance(cycle.body, BodyChunks):
            cycle.body = BodyChunks(cycle.body)
        super().on_body(body)

    _idle_since: float | None = None
    """When the last answer completed with nothing received since (``None``: busy)."""
    _keepalive: asyncio.TimerHandle | None = None
    """The one keep-alive timer (armed when an answer completes and none is armed)."""

    def _unset_keepalive_if_required(self) -> None:
        """Bytes arrived (or the connection is gone): not idle any more. uvicorn cancels
        its timer here; the lazy timer stays armed and finds the connection busy."""
        self._idle_since = None

    def on_response_complete(self) -> None:
        """uvicorn's ``on_response_complete`` (0.54), with the lazy keep-alive timer: an
        idle connection is closed ``timeout_keep_alive`` seconds after its last answer
        completed, as uvicorn closes it, without a new timer per answer (uvicorn starts
        one, and cancels it when the next request arrives)."""
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
            return
        now = self.loop.time()
        self._idle_since = now
        if self._keepalive is None:
            when = now + self.timeout_keep_alive
            self._keepalive = self.loop.call_at(when, self._keepalive_due)

    def _keepalive_due(self) -> None:
        self._keepalive = None
        since = self._idle_since
        if since is None:
            return  # busy: armed again when the answer completes
        deadline = since + self.timeout_keep_alive
        if self.loop.time() >= deadline:
            self.timeout_keep_alive_handler()
        else:  # idle since a later answer: due then
            self._keepalive = self.loop.call_at(deadline, self._keepalive_due)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        """uvicorn's, keeping the task on the cycle (the request's task, for the client
        watch to cancel without asking asyncio for the current task)."""
        if getattr(self.config, "reset_contextvars", False):  # uvicorn >= 0.52's option
            task = self.loop.create_task(cycle.run_asgi(app), context=contextvars.Context())
        else:
            task = self.loop.create_task(cycle.run_asgi(app))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)
        if isinstance(cycle, GatewayCycle):
            cycle.task = task

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
        cycle = self.cycle
        if isinstance(cycle, GatewayCycle) and cycle.disconnected:
            notify = cycle.on_disconnect
            if notify is not None:
                cycle.on_disconnect = None
                notify()

    def on_headers_complete(self) -> None:
        """uvicorn's ``on_headers_complete`` (0.54), the cycle a :class:`GatewayCycle`
        writing through :class:`HeadWithBody`."""
        parser: Any = self.parser
        scope: Any = self.scope
        http_version = parser.get_http_version()
        scope["method"] = parser.get_method().decode("ascii")
        if http_version != "1.1":
            scope["http_version"] = http_version
        if parser.should_upgrade() and self._should_upgrade():
            return
        parsed_url: Any = httptools.parse_url(self.url)  # pyright: ignore[reportUnknownMemberType]
        raw_path: bytes = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        scope["path"] = self.root_path + path
        scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        scope["query_string"] = parsed_url.query or b""
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            app: ASGI3Application = service_unavailable
            self.logger.warning("Exceeded concurrency limit.")
        else:
            app = cast(ASGI3Application, self.app)  # pyright: ignore[reportUnknownMemberType]  # uvicorn's loaded app is a union of its wrappers
        existing = cast(RequestResponseCycle | None, self.cycle)  # None before the first
        cycle = self.cycle = GatewayCycle(
            scope=scope,
            transport=self.transport,
            flow=self.flow,
            logger=self.logger,
            access_logger=self.access_logger,
            access_log=self.access_log,
            default_headers=self.server_state.default_headers,
            message_event=asyncio.Event(),
            expect_100_continue=self.expect_100_continue,
            keep_alive=http_version != "1.0" and parser.should_keep_alive(),
            on_response=self.on_response_complete,
        )
        # Its task has not run yet: nothing was written through the transport.
        cycle.transport = HeadWithBody(self.transport, cycle)
        if existing is None or existing.response_complete:
            self._start_asgi_task(cycle, app)
        else:  # pipelined: queued until the answer before it is complete
            self.flow.pause_reading()
            self.pipeline.appendleft((cycle, app))


BAD_NAME_BYTES = bytes(byte for byte in range(256) if HEADER_RE.match(bytes((byte,))))
"""The bytes uvicorn's HEADER_RE refuses in a header name (a character class)."""
BAD_VALUE_BYTES = bytes(byte for byte in range(256) if HEADER_VALUE_RE.match(bytes((byte,))))
"""The bytes uvicorn's HEADER_VALUE_RE refuses in a header value (a character class)."""


class GatewayCycle(RequestResponseCycle):
    """uvicorn's request cycle writing a plain answer (one ``content-length``, no
    ``transfer-encoding``) without its loop over the head's headers.

    Invariant: every message produces the bytes, the state and the errors uvicorn's own
    ``send`` does. The lean path is taken only where it provably does: the access log is
    off, writing is not paused, the client is still there; a start message's headers are
    a list of ``(name, value)`` pairs with lower-case names, a ``content-length`` (the
    first one counts) and neither ``transfer-encoding`` nor ``connection`` (HEADER_RE and
    HEADER_VALUE_RE are character classes, so searching all names, or all values, joined
    finds a bad byte exactly when searching each one does); a body message follows such
    a head of a request other than ``HEAD``. Anything else is uvicorn's ``send``.
    """

    notifies_disconnect = True
    """The cycle calls :attr:`on_disconnect` (see ``client_watch.DisconnectNotifier``)."""
    task: asyncio.Task[None] | None = None
    """The task running the app for this request (set as it starts)."""
    on_disconnect: Callable[[], None] | None = None
    """Called once, from ``connection_lost``, if the client left before the answer was
    complete (uvicorn marks the cycle ``disconnected`` then)."""
    transport: HeadWithBody  # pyright: ignore[reportIncompatibleVariableOverride]  # a wrapper of the asyncio transport, set right after construction

    async def send(self, message: ASGISendEvent) -> None:
        if self.disconnected or self.access_log or self.flow.write_paused:
            await super().send(message)
            return
        kind = message.get("type")
        if not self.response_started and kind == "http.response.start":
            head = self._lean_head(message)
            if head is not None:
                self.response_started = True
                self.waiting_for_100_continue = False
                self.transport.head(head, self.expected_content_length > 0)
                return
        elif (
            kind == "http.response.body"
            and self.chunked_encoding is False
            and not self.response_complete
            and self.scope["method"] != "HEAD"
        ):
            self._lean_body(message)
            return
        await super().send(message)

    def _lean_head(self, message: Any) -> bytes | None:
        """The head uvicorn would write for this start message, the cycle's length and
        encoding set as uvicorn sets them; ``None`` (nothing changed) for uvicorn's own
        ``send`` to answer it."""
        try:
            status = message["status"]
            given = message.get("headers", [])
            if type(given) is not list or status not in STATUS_LINE:
                return None  # an iterator would be used up here
            headers = self.default_headers + cast(list[tuple[bytes, bytes]], given)
            names, values = zip(*headers, strict=True)
            joined = b"".join(names)
            if (
                joined != joined.lower()
                or b"transfer-encoding" in names
                or b"connection" in names
                or len(joined.translate(None, BAD_NAME_BYTES)) != len(joined)
                or len((all_values := b"".join(values)).translate(None, BAD_VALUE_BYTES))
                != len(all_values)
            ):
                return None
            length = int(values[names.index(b"content-length")].decode())
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        self.expected_content_length = length
        self.chunked_encoding = False
        close = b"" if self.keep_alive else b"connection: close\r\n"
        lines = b"\r\n".join(map(b": ".join, headers))
        return b"%s%s\r\n%s\r\n" % (STATUS_LINE[status], lines, close)

    def _lean_body(self, message: Any) -> None:
        """uvicorn's ``send`` of a body message after a head with a ``content-length``."""
        body = message.get("body", b"")
        more_body = message.get("more_body", False)
        size = len(body)
        if size > self.expected_content_length:
            raise RuntimeError("Response content longer than Content-Length")
        self.expected_content_length -= size
        self.transport.write(body)
        if not more_body:
            if self.expected_content_length != 0:
                raise RuntimeError("Response content shorter than Content-Length")
            self.response_complete = True
            self.message_event.set()
            if not self.keep_alive:
                self.transport.close()
            self.on_response()


class HeadWithBody:
    """The connection's transport as one request cycle writes to it: the answer's head,
    when body bytes of a known length follow, is held and written with the first of them
    (``writelines``: one ``writev`` under uvloop)."""

    __slots__ = ("_cycle", "_head_seen", "_held", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = cycle
        self._head_seen = False
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
            return
        if not self._head_seen and self._cycle.response_started:
            self._head_seen = True  # uvicorn writes the whole head at once, first
            if self._body_follows():
                self._held = data
                return
        self._transport.write(data)

    def head(self, head: bytes, body_follows: bool) -> None:
        """:meth:`write` of the head, told whether body bytes follow (``GatewayCycle``
        knows it from the head it wrote)."""
        self._head_seen = True
        if body_follows and self._cycle.scope["method"] != "HEAD":
            self._held = head
        else:
            self._transport.write(head)

    def _body_follows(self) -> bool:
        cycle = self._cycle
        return (
            cycle.chunked_encoding is False
            and cycle.expected_content_length > 0
            and cycle.scope["method"] != "HEAD"
        )

    def writelines(self, pieces: Iterable[bytes]) -> None:
        self.write(b"".join(pieces))

    def close(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
