"""Proxied streams, chunk by chunk: nothing waits for the whole upstream stream.

Across dialects each upstream chunk is split into SSE events, decoded into transcript
updates and re-encoded into the client's dialect as it arrives. Within a dialect the
upstream bytes are forwarded as they come (decoded on the side only when the vault must
keep signatures). A stream that breaks or turns malformed mid-way ends with the client
dialect's own error event, never a hang or a silently truncated answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable

import httpx
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from interlock.codecs._sse import SseEvent, SseParser, format_sse
from interlock.gateway.proxy import TRANSLATION_HEADER, Proxy, ProxyCall, vault_needed
from interlock.gateway.upstream import body_chunks
from interlock.transcript import (
    DecodeError,
    ResponseBuilder,
    ResponseFinished,
    StreamFailed,
    Update,
)

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
    return StreamFailed(
        code="upstream_stream_broken", message="the upstream stream broke off", status=502
    )


class _Relay:
    """Decoder side of one stream: SSE → updates, folding for the vault when needed."""

    def __init__(self, proxy: Proxy, call: ProxyCall) -> None:
        self.proxy = proxy
        self.call = call
        self.parser = SseParser()
        self.decoder = call.upstream.dialect.stream_decoder()
        self.builder = ResponseBuilder() if vault_needed(call) else None
        self.failed = False

    def updates(self, chunk: bytes) -> list[Update]:
        return [update for event in self.parser.feed(chunk) for update in self.decoder.feed(event)]

    def final_updates(self) -> list[Update]:
        updates = [update for event in self.parser.finish() for update in self.decoder.feed(event)]
        return updates + self.decoder.finish()

    async def observe(self, update: Update) -> None:
        """Fold for the vault; keep the step before its terminal event goes out."""
        if isinstance(update, StreamFailed):
            self.failed = True
        if self.builder is None:
            return
        self.builder.add(update)
        if isinstance(update, ResponseFinished):
            message = self.builder.build().message
            await self.proxy.vault.remember(self.call.tenant, self.call.upstream.config, message)


async def _translated(
    relay: _Relay, response: httpx.Response, framer: _Framer
) -> AsyncIterator[bytes]:
    encoder = relay.call.ingress.stream_encoder()

    async def encode(updates: list[Update]) -> bytes:
        events: list[SseEvent] = []
        for update in updates:
            await relay.observe(update)
            events.extend(encoder.encode(update))
        return framer.frame(events) if events else b""

    try:
        async for chunk in body_chunks(response):
            out = await encode(relay.updates(chunk))
            if out:
                yield out
        out = await encode(relay.final_updates())
    except (httpx.HTTPError, DecodeError) as error:
        out = await encode([_broken(error)])
    yield out + framer.frame(encoder.finish()) + framer.close()


async def _passthrough(
    relay: _Relay, response: httpx.Response, framer: _Framer
) -> AsyncIterator[bytes]:
    decode = relay.builder is not None or framer.json_array
    try:
        async for chunk in body_chunks(response):
            if not decode:
                yield chunk
                continue
            events = relay.parser.feed(chunk)
            for event in events:
                for update in relay.decoder.feed(event):
                    await relay.observe(update)
            yield framer.frame(events) if framer.json_array else chunk
        if decode:
            for update in relay.final_updates():
                await relay.observe(update)
    except (httpx.HTTPError, DecodeError) as error:
        relay.failed = True
        encoder = relay.call.ingress.stream_encoder()
        yield framer.frame(encoder.encode(_broken(error)) + encoder.finish())
    yield framer.close()


class RelayResponse(StreamingResponse):
    """A streamed answer that stops, closing the upstream, as soon as the client goes away.

    Starlette's ``StreamingResponse`` watches for the disconnect too, but under ASGI < 2.4
    (uvicorn's HTTP protocols say 2.3) it opens an anyio task group per response and moves
    the stream into a new task, a scheduling round before the first byte can leave. Here
    the stream runs in the request's own task and a plain task waits for
    ``http.disconnect``, then cancels it: the upstream read stops (an abandoned model
    answer is not paid for to the end) and the body generator is closed.
    """

    def __init__(
        self, body: AsyncGenerator[bytes], *, media_type: str, headers: dict[str, str]
    ) -> None:
        super().__init__(body, media_type=media_type, headers=headers)
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        assert task is not None, "ASGI apps run in a task"
        gone = False

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            # The last body message completes the response without yielding to this task,
            # and the watcher is cancelled right after: a disconnect seen here is real.
            gone = True
            task.cancel()

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            if not gone:
                raise
            task.uncancel()
        finally:
            watcher.cancel()
            await self.body.aclose()


def stream_response(proxy: Proxy, call: ProxyCall, response: httpx.Response) -> RelayResponse:
    """The client's streaming response; metrics and the access log close with the stream."""
    relay = _Relay(proxy, call)
    framer = _Framer(call.json_array)
    produce: Callable[[_Relay, httpx.Response, _Framer], AsyncIterator[bytes]] = (
        _passthrough if call.passthrough else _translated
    )

    async def body() -> AsyncGenerator[bytes]:
        proxy.metrics.active_streams += 1
        status = 200
        try:
            async for piece in produce(relay, response, framer):
                if piece:
                    yield piece
            if relay.failed:
                status = 502
        except (asyncio.CancelledError, GeneratorExit):
            status = CLIENT_GONE
            call.record.error = "client_disconnected"
            raise
        finally:
            proxy.metrics.active_streams -= 1
            await response.aclose()
            proxy.finish(call.record, status)

    media_type = "application/json" if framer.json_array else "text/event-stream"
    headers = {TRANSLATION_HEADER: call.translation, "cache-control": "no-cache"}
    return RelayResponse(body(), media_type=media_type, headers=headers)
