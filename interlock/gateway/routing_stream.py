"""Routed answers held before they are committed: a retryable error answer read whole,
and a 200 stream held until its first event (which may still be a retryable error).

Nothing of a held answer has reached the client: the router may still move on. A stream
whose first event is content is replayed (:func:`replayed`): the held bytes, then the
rest of the upstream stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from interlock.codecs._sse import SseEvent, SseParser
from interlock.gateway.upstream import AnswerTooLarge, Upstream, body_chunks, read_answer
from interlock.transcript import (
    DecodeError,
    PartDelta,
    PartFinished,
    PartStarted,
    ResponseFinished,
    StreamFailed,
)


def retryable(status: int) -> bool:
    """A 429 or any 5xx (Anthropic's 529 "overloaded" included): the request did not run."""
    return status == 429 or status >= 500


async def kept(upstream: Upstream, response: httpx.Response) -> httpx.Response:
    """A retryable error answer read whole (its connection freed while others are tried)."""
    try:
        body = await read_answer(response, upstream.config.max_response_bytes)
    except (AnswerTooLarge, httpx.HTTPError):
        body = b""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=body)


async def peek(
    upstream: Upstream, response: httpx.Response
) -> tuple[list[bytes], AsyncIterator[bytes], StreamFailed | None]:
    """The stream's bytes up to its first complete event, the rest, and the retryable
    failure that event reports before any content (``None`` when it is not one)."""
    parser = SseParser(upstream.config.max_response_bytes)
    rest = aiter(body_chunks(response))
    held: list[bytes] = []
    async for chunk in rest:
        held.append(chunk)
        start = 0
        while start < len(chunk):  # event by event: the relay parses the rest anyway
            end = _event_end(chunk, start)
            events = parser.feed(chunk[start:end])
            if events:
                return held, rest, _early_failure(upstream, events)
            start = end
    return held, rest, None


_BLANK_LINES = (b"\n\n", b"\r\n\r\n", b"\r\r")


def _event_end(chunk: bytes, start: int) -> int:
    """Where the first blank line after ``start`` ends (the chunk's end if none)."""
    ends = [
        found + len(blank) for blank in _BLANK_LINES if (found := chunk.find(blank, start)) >= 0
    ]
    return min(ends) if ends else len(chunk)


def _early_failure(upstream: Upstream, events: list[SseEvent]) -> StreamFailed | None:
    """Decoded one event at a time, up to the first content or failure (no further).

    Every dialect's error event says ``error`` (its event name or a JSON key): without
    the word, the events are not decoded at all (the relay decodes them anyway)."""
    if not any("error" in event.data or event.event == "error" for event in events):
        return None
    decoder = upstream.dialect.stream_decoder()
    for event in events:
        try:
            updates = decoder.feed(event)
        except DecodeError:
            return None  # the relay reports it, in the client's dialect
        for update in updates:
            if isinstance(update, PartStarted | PartDelta | PartFinished | ResponseFinished):
                return None
            if isinstance(update, StreamFailed):
                status = update.status
                return update if status is not None and retryable(status) else None
    return None


class _Replayed(httpx.AsyncByteStream):
    """The held bytes, then the rest of the upstream stream; closing closes the upstream."""

    def __init__(
        self, held: list[bytes], rest: AsyncIterator[bytes], upstream: httpx.Response
    ) -> None:
        self.held = held
        self.rest = rest
        self.upstream = upstream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.held:
            yield chunk
        async for chunk in self.rest:
            yield chunk

    async def aclose(self) -> None:
        await self.upstream.aclose()


def replayed(
    response: httpx.Response, held: list[bytes], rest: AsyncIterator[bytes]
) -> httpx.Response:
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    replayed = httpx.Response(
        response.status_code, headers=headers, stream=_Replayed(held, rest, response)
    )
    replayed.request = response.request
    return replayed
