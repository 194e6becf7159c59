"""Proxied streams, chunk by chunk: nothing waits for the whole upstream stream.

Across dialects each upstream chunk is split into SSE events, decoded into transcript
updates and re-encoded into the client's dialect as it arrives. Within a dialect the
upstream bytes are forwarded as they come (decoded on the side only when the vault must
keep signatures). A stream that breaks or turns malformed mid-way ends with the client
dialect's own error event, never a hang or a silently truncated answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass

import httpx
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from interlock.codecs._sse import SseEvent, SseParser, format_sse
from interlock.gateway.chat_usage import without_usage_chunks
from interlock.gateway.lifecycle import SHUTDOWN_CODE, SHUTDOWN_MESSAGE, Lifecycle
from interlock.gateway.operations import StreamUsage
from interlock.gateway.provenance import StreamBlobs
from interlock.gateway.proxy import Proxy, ProxyCall
from interlock.gateway.response_state import StreamedId
from interlock.gateway.stream_end import EndWatch
from interlock.gateway.stream_losses import StreamLabel
from interlock.gateway.upstream import body_chunks
from interlock.gateway.vault import vault_needed
from interlock.transcript import (
    DecodeError,
    ResponseBuilder,
    ResponseFinished,
    StreamFailed,
    Update,
)

LOGGER = logging.getLogger("interlock.gateway")

CLIENT_GONE = 499
"""Status recorded (metrics, access log) for a stream the client abandoned (nginx's code)."""


class _Framer:
    """Client-side framing: SSE, or Gemini's streamed JSON array (no ``?alt=sse``)."""

    def __init__(self, json_array: bool) -> None:
        self.json_array = json_array
        self.opened = False

    def frame(self, events: list[SseEvent]) -> bytes:
        if not self.json_array:
            return "".join(format_sse(event.data, event.event) for event in events).encode()
        pieces: list[str] = []
        for event in events:
            if event.data == "[DONE]":
                continue
            pieces.append(("[" if not self.opened else ",\r\n") + event.data)
            self.opened = True
        return "".join(pieces).encode()

    def close(self) -> bytes:
        if not self.json_array:
            return b""
        return b"]" if self.opened else b"[]"


def _broken(error: Exception) -> StreamFailed:
    if isinstance(error, DecodeError):
        return StreamFailed(
            code="upstream_invalid_stream",
            message=f"the upstream stream was malformed: {error}",
            status=502,
        )
    if isinstance(error, httpx.TimeoutException):
        return StreamFailed(
            code="upstream_timeout", message="the upstream stream timed out", status=504
        )
    if isinstance(error, httpx.HTTPError):
        return StreamFailed(
            code="upstream_stream_broken", message="the upstream stream broke off", status=502
        )
    LOGGER.error("relaying a stream failed", exc_info=error)
    return StreamFailed(
        code="internal_error", message="the gateway failed relaying the stream", status=500
    )


@dataclass(slots=True)
class _Piece:
    """What one upstream read completed: the raw bytes of whole events, and their updates.

    ``failure`` is set when the gateway, not the upstream's own events, ended the stream
    (a transport error, malformed bytes, a truncated stream): the client must be told.
    """

    raw: bytes
    events: list[SseEvent]
    updates: list[Update]
    failure: StreamFailed | None = None


class _Relay:
    """The one bytes-to-updates loop every proxied stream runs (see :meth:`pieces`)."""

    def __init__(self, proxy: Proxy, call: ProxyCall, *, decoding: bool, keep_raw: bool) -> None:
        self.proxy = proxy
        self.call = call
        self.parser = SseParser(call.upstream.config.max_response_bytes)
        self.decoder = call.upstream.dialect.stream_decoder()
        self.builder = (
            ResponseBuilder() if vault_needed(call.upstream.config, call.passthrough) else None
        )
        self.decoding = decoding
        self.keep_raw = keep_raw
        self.failure: StreamFailed | None = None
        self.usage = StreamUsage(call.upstream.dialect)
        self.end = EndWatch(call.upstream.dialect.name)
        self.stored = StreamedId.watching(proxy.operations.responses, call)
        """Records a stored Responses answer's id (:mod:`.response_state`)."""
        provenance = proxy.provenance
        self.issued = (
            provenance if provenance is not None and provenance.tells_apart(call) else None
        )
        """Records which vendor issued the opaque reasoning (:mod:`.provenance`)."""
        self.blobs = StreamBlobs(call.upstream.dialect.name)
        self.recorded: set[str] = set()

    async def pieces(self, response: httpx.Response) -> AsyncIterator[_Piece]:
        """Upstream bytes → complete events → updates, one piece per read.

        ``raw`` covers whole events only (a partial event is held back until its end
        arrives), so whatever follows, an error event included, starts on an event
        boundary. Every failure (transport, malformed bytes or JSON, an event over the
        size limit, a stream cut mid-line, an inconsistent update sequence, a bug) ends
        the pieces with one piece holding a single :class:`StreamFailed`.
        """
        held = b""
        try:
            async for chunk in body_chunks(response):
                events = self.parser.feed(chunk)
                if self.issued is not None:
                    await self._record(events)  # before the client can have the blobs
                raw = b""
                if self.keep_raw:
                    held = held + chunk if held else chunk
                    cut = len(held) - self.parser.pending
                    raw, held = held[:cut], held[cut:]
                yield _Piece(raw, events, await self._observed(self._decode(events)))
            yield await self._last(held)
        except Exception as error:  # every failure becomes the client's error event
            failure = _broken(error)
            await self._observe(failure)
            yield _Piece(b"", [], [failure], failure)

    async def _last(self, held: bytes) -> _Piece:
        """The end of the stream: a final event without its blank line, and the verdict."""
        if self.parser.mid_line:
            raise DecodeError("stream", "the stream ended in the middle of a line")
        events = self.parser.finish()
        if self.issued is not None:
            await self._record(events)
        updates = self._decode(events)
        ending = self.decoder.finish() if self.decoding else self._undecoded_end(events)
        failure = next((u for u in ending if isinstance(u, StreamFailed)), None)
        # a last event without its blank line is closed, so nothing after it joins it
        raw = held + b"\n\n" if held else b""
        return _Piece(raw, events, await self._observed(updates + ending), failure)

    async def _record(self, events: list[SseEvent]) -> None:
        """Record the vendor of the opaque reasoning among ``events`` (each blob once)."""
        assert self.issued is not None, "only when recording"
        blobs = [blob for blob in self.blobs.events(events) if blob not in self.recorded]
        if blobs:
            self.recorded.update(blobs)
            config = self.call.upstream.config
            await self.issued.record(self.call.tenant, config.issuer, blobs)

    def _undecoded_end(self, events: list[SseEvent]) -> list[Update]:
        """A stream relayed undecoded that ended before its final event was cut short."""
        self.end.events(events)
        if self.end.ended:
            return []
        message = "the upstream stream ended before its final event (the answer is cut short)"
        return [StreamFailed(code="upstream_truncated", message=message, status=502)]

    def _decode(self, events: list[SseEvent]) -> list[Update]:
        if not self.decoding:
            self.usage.events(events)
            self.end.events(events)
            if self.stored is not None:
                self.stored.events(events)
            return []
        return [update for event in events for update in self.decoder.feed(event)]

    async def _observed(self, updates: list[Update]) -> list[Update]:
        self.usage.updates(updates)
        if self.stored is not None:
            self.stored.updates(updates)
            await self.stored.flush()
        for update in updates:
            await self._observe(update)
        return updates

    async def _observe(self, update: Update) -> None:
        """Fold for the vault; keep the step before its terminal event goes out."""
        if isinstance(update, StreamFailed):
            self.failure = update
        if self.builder is None:
            return
        self.builder.add(update)
        if isinstance(update, ResponseFinished):
            message = self.builder.build().message
            await self.proxy.vault.remember(self.call.tenant, self.call.upstream.config, message)


def _error_events(call: ProxyCall, failure: StreamFailed) -> list[SseEvent]:
    """The client dialect's error event (and closing events), from a fresh encoder."""
    encoder = call.ingress.stream_encoder()
    return encoder.encode(failure) + encoder.finish()


async def _translated(
    relay: _Relay, response: httpx.Response, framer: _Framer
) -> AsyncIterator[bytes]:
    encoder = relay.call.ingress.stream_encoder()
    label = StreamLabel(relay.call, relay.proxy.metrics)
    async for piece in relay.pieces(response):
        try:
            events = [event for update in piece.updates for event in encoder.encode(update)]
            label.updates(piece.updates)
            events = label.events(events)
        except Exception as error:  # an encoder bug still ends the stream in shape
            failure = _broken(error)
            relay.failure = failure
            yield framer.frame(_error_events(relay.call, failure)) + framer.close()
            return
        if events:
            yield framer.frame(events)
    yield framer.frame(label.closing(encoder.finish())) + framer.close()


async def _passthrough(
    relay: _Relay, response: httpx.Response, framer: _Framer
) -> AsyncIterator[bytes]:
    async for piece in relay.pieces(response):
        out = framer.frame(piece.events) if framer.json_array else piece.raw
        if relay.call.hide_usage and (kept := without_usage_chunks(piece.events)) is not None:
            out = framer.frame(kept)  # the relay counted it; the client did not ask for it
        if piece.failure is not None:  # the upstream did not say so: the client must hear it
            out += framer.frame(_error_events(relay.call, piece.failure))
        if out:
            yield out
    yield framer.close()


def _farewell(relay: _Relay, framer: _Framer) -> bytes:
    """The end of a stream cut short by a drain: the dialect's error event (a 503)."""
    ended = StreamFailed(code=SHUTDOWN_CODE, message=SHUTDOWN_MESSAGE, status=503)
    relay.failure = ended
    return framer.frame(_error_events(relay.call, ended)) + framer.close()


class RelayResponse(StreamingResponse):
    """A streamed answer sent from the request's own task.

    The client's disconnect is noticed by the endpoint's
    :class:`~interlock.gateway.client_watch.ClientWatch`, which cancels this task: the
    upstream read stops and the body generator is closed (recording status 499). A drain
    that reaches its deadline (:meth:`stop`) ends the stream with the farewell error event.
    """

    def __init__(
        self,
        body: AsyncGenerator[bytes],
        *,
        media_type: str,
        headers: dict[str, str],
        lifecycle: Lifecycle | None = None,
        farewell: Callable[[], bytes] = lambda: b"",
    ) -> None:
        super().__init__(body, media_type=media_type, headers=headers)
        self.body = body
        self.lifecycle = lifecycle
        self.farewell = farewell
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def busy(self) -> bool:
        """A drain waits for the stream (its request is counted too)."""
        return True

    def draining(self) -> None:
        """The stream goes on until it ends or the drain deadline passes."""

    def stop(self) -> None:
        """The drain deadline passed: end the stream with :func:`_farewell`'s error event."""
        if self._task is not None and not self._stopping:
            self._stopping = True
            self._task.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        assert task is not None, "ASGI apps run in a task"
        self._task = task
        leave = self.lifecycle.join(self) if self.lifecycle is not None else None
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            if not self._stopping:
                raise  # the client went away (the endpoint's watch) or the server stops
            task.uncancel()
            if task.cancelling():
                raise  # the client went away as well: nobody to say farewell to
            await self._say_farewell(send)
        finally:
            if leave is not None:
                leave()
            await self.body.aclose()

    async def _say_farewell(self, send: Send) -> None:
        await self.body.aclose()  # closes the upstream response first
        with contextlib.suppress(OSError, RuntimeError):  # the client may be gone already
            await send({"type": "http.response.body", "body": self.farewell()})


def stream_response(proxy: Proxy, call: ProxyCall, response: httpx.Response) -> RelayResponse:
    """The client's streaming response; metrics and the access log close with the stream."""
    framer = _Framer(call.json_array)
    # Within a dialect the upstream's bytes go to the client even when the request was
    # re-encoded (history restored from the vault): nothing the dialect carries is lost
    # (a Chat stream's further choices, n > 1, which the canonical response has no place for).
    relayed = call.passthrough or call.ingress.name == call.upstream.dialect.name
    relay = _Relay(
        proxy,
        call,
        decoding=not call.passthrough or vault_needed(call.upstream.config, call.passthrough),
        keep_raw=relayed and not framer.json_array,
    )
    produce: Callable[[_Relay, httpx.Response, _Framer], AsyncIterator[bytes]] = (
        _passthrough if relayed else _translated
    )

    async def body() -> AsyncGenerator[bytes]:
        proxy.metrics.active_streams += 1
        status = 200
        try:
            async for piece in produce(relay, response, framer):
                if piece:
                    yield piece
            if relay.failure is not None:
                status = relay.failure.status or 502
                call.record.error = relay.failure.code
        except (asyncio.CancelledError, GeneratorExit):
            status = CLIENT_GONE
            call.record.error = "client_disconnected"
            raise
        finally:
            proxy.metrics.active_streams -= 1
            await response.aclose()
            proxy.operations.finished(call, relay.usage.result())
            proxy.finish(call.record, status)

    media_type = "application/json" if framer.json_array else "text/event-stream"
    headers = {**call.headers(response), "cache-control": "no-cache"}
    return RelayResponse(
        body(),
        media_type=media_type,
        headers=headers,
        lifecycle=proxy.lifecycle,
        farewell=lambda: _farewell(relay, framer),
    )
