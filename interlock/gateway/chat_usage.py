"""Usage for Chat streams relayed unchanged, when the client did not ask for it.

A Chat Completions upstream reports a stream's usage only when the request says
``stream_options.include_usage``; the official SDKs leave it out by default, so a
Chat-to-Chat stream relayed byte for byte would be counted with no tokens (rate limits
by tokens, usage accounting). The gateway asks for the usage chunk itself and takes it
out of what the client receives, so the client sees the stream it asked for.

Invariants: the request is changed only when it has no ``stream_options`` at all (one
member is added at the front of the object: the client's bytes are otherwise unchanged);
only the usage chunk (no ``choices``, a ``usage`` object) is removed, after the relay
counted it. Other chunks keep the ``"usage": null`` member the upstream then adds.
"""

from __future__ import annotations

import json
from typing import cast

from interlock.codecs import openai_chat
from interlock.codecs._sse import SseEvent
from interlock.transcript import Request

_ASK = b'"stream_options":{"include_usage":true},'


def ask_for_usage(body: bytes, request: Request, dialect: str) -> tuple[bytes, bool]:
    """``body`` asking for the usage chunk, and whether the client must not see it.

    Unchanged (``False``) unless ``dialect`` is Chat and ``request`` streams with no
    ``stream_options``.
    """
    if dialect != openai_chat.DIALECT or not request.stream:
        return body, False
    if "stream_options" in request.extra.get(openai_chat.DIALECT, {}):
        return body, False
    start = body.find(b"{")
    if start < 0:
        return body, False
    return body[: start + 1] + _ASK + body[start + 1 :], True


def is_usage_chunk(event: SseEvent) -> bool:
    """True for the chunk ``include_usage`` adds: empty ``choices`` and a usage object."""
    if "[]" not in event.data:  # cheap: no copy of every relayed chunk
        return False
    try:
        chunk: object = json.loads(event.data)
    except ValueError:
        return False
    if not isinstance(chunk, dict):
        return False
    members = cast("dict[str, object]", chunk)
    return members.get("choices") == [] and isinstance(members.get("usage"), dict)


def without_usage_chunks(events: list[SseEvent]) -> list[SseEvent] | None:
    """``events`` minus usage chunks, or ``None`` when there was none (keep the raw bytes)."""
    kept = [event for event in events if not is_usage_chunk(event)]
    return kept if len(kept) != len(events) else None
