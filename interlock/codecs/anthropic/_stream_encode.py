"""Canonical stream updates → Messages API SSE events.

Every event is named (``event: <type>``) and carries the same ``type`` in its data (trap
A32); there is no ``[DONE]``. Blocks are strictly sequential: a block still open when
another starts is closed first (its late ``PartFinished`` then adds nothing), and wire
indexes count only the blocks actually sent.
Text, thinking and tool-call input stream as deltas; a thinking block's signature goes out
as one ``signature_delta`` just before its ``content_block_stop``. Parts with no deltas of
their own (redacted thinking, server-tool blocks, media) go out whole at ``PartFinished``.
What Anthropic cannot show (another provider's opaque-only reasoning) is left out, as in
:func:`encode_response`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from interlock.codecs._json import compact
from interlock.codecs._sse import SseEvent
from interlock.codecs.anthropic._encode import PartEncoder
from interlock.codecs.anthropic._errors import error_type
from interlock.codecs.anthropic._response import stop_reason
from interlock.codecs.anthropic._usage import encode_usage
from interlock.codecs.anthropic._wire import object_entry, own_extra
from interlock.transcript import (
    CandidateUpdate,
    JsonObject,
    JsonValue,
    Message,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReplayPolicy,
    Response,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    ToolCallPart,
    Update,
    Usage,
    UsageUpdate,
)

_DELTA_KEYS = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking")}
_ERROR_TYPES = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "rate_limit_error",
        "api_error",
        "overloaded_error",
        "timeout_error",
    }
)


def _event(data: JsonObject) -> SseEvent:
    return SseEvent(data=compact(data), event=str(data["type"]))


@dataclass(slots=True)
class _Open:
    """The block being streamed: its canonical index, wire index, kind and what was sent."""

    index: int
    wire: int
    kind: str
    sent: str = ""


class StreamEncoder:
    """Feed canonical updates; get Anthropic SSE events back."""

    __slots__ = ("_closed", "_ended", "_next", "_open", "_parts", "_started", "_usage")

    def __init__(self) -> None:
        self._open: _Open | None = None
        self._next = 0
        self._usage: Usage | None = None
        self._started: ResponseStarted | None = None
        self._parts: list[Part] = []
        self._closed: set[int] = set()
        self._ended = False

    def encode(self, update: Update) -> list[SseEvent]:
        """The events for one update."""
        if self._ended:
            return []
        match update:
            case ResponseStarted():
                return self._start(update)
            case PartStarted():
                return self._part_started(update.index, update.part)
            case PartDelta():
                return self._part_delta(update.index, update.delta)
            case PartFinished():
                return self._part_finished(update.index, update.part)
            case UsageUpdate():
                self._usage = update.usage
                return []
            case ResponseFinished():
                return self._finished(update)
            case StreamFailed():
                return self._failed(update)
            case CandidateUpdate():
                return []  # one candidate per message: the gateway warns candidates_dropped
            case _:
                assert_never(update)

    def finish(self) -> list[SseEvent]:
        """Nothing is held back: every event went out with its update."""
        return []

    def _start(self, update: ResponseStarted) -> list[SseEvent]:
        self._started = update
        message: JsonObject = {
            "id": update.id or "msg_interlock",
            "type": "message",
            "role": "assistant",
            "model": update.model or "",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": encode_usage(self._usage),
        }
        message.update(object_entry(own_extra(update.extra), "fields"))
        return [_event({"type": "message_start", "message": message})]

    def _ensure_started(self) -> list[SseEvent]:
        return [] if self._started is not None else self._start(ResponseStarted())

    def _part_started(self, index: int, part: Part) -> list[SseEvent]:
        events = self._ensure_started() + self._close()
        block = PartEncoder(ReplayPolicy(), for_request=False).encode(part, "part")
        kind = block.get("type") if block is not None else None
        if block is None or kind not in ("text", "thinking", "tool_use"):
            return events  # sent whole at PartFinished (or not at all)
        start: JsonObject = dict(block)
        if kind == "tool_use":
            start["input"] = {}
        else:
            start[str(kind)] = ""
            if kind == "thinking":
                start["signature"] = ""
            if "citations" in start:
                start["citations"] = []
        self._open = _Open(index=index, wire=self._next, kind=str(kind))
        self._next += 1
        events.append(
            _event(
                {"type": "content_block_start", "index": self._open.wire, "content_block": start}
            )
        )
        initial = (
            part.arguments if isinstance(part, ToolCallPart) else str(block.get(str(kind), ""))
        )
        return events + self._part_delta(index, initial)

    def _part_delta(self, index: int, delta: str) -> list[SseEvent]:
        block = self._open
        if block is None or block.index != index or not delta:
            return []
        block.sent += delta
        if block.kind == "tool_use":
            body: JsonObject = {"type": "input_json_delta", "partial_json": delta}
        else:
            name, key = _DELTA_KEYS[block.kind]
            body = {"type": name, key: delta}
        return [_event({"type": "content_block_delta", "index": block.wire, "delta": body})]

    def _part_finished(self, index: int, part: Part) -> list[SseEvent]:
        self._parts.append(part)
        block = self._open
        if index in self._closed:
            return []  # streamed already and closed when a later part started
        if block is None or block.index != index:
            return self._ensure_started() + self._close() + self._whole(part)
        wire = PartEncoder(ReplayPolicy(), for_request=False).encode(part, "part") or {}
        final = part.arguments if isinstance(part, ToolCallPart) else str(wire.get(block.kind, ""))
        if block.kind == "tool_use" and final == "{}" and not block.sent:
            final = ""
        events = (
            self._part_delta(index, final[len(block.sent) :])
            if final.startswith(block.sent)
            else []
        )
        for citation in _citations(wire):
            delta: JsonObject = {"type": "citations_delta", "citation": citation}
            events.append(
                _event({"type": "content_block_delta", "index": block.wire, "delta": delta})
            )
        signature = wire.get("signature")
        if block.kind == "thinking" and isinstance(signature, str) and signature:
            delta = {"type": "signature_delta", "signature": signature}
            events.append(
                _event({"type": "content_block_delta", "index": block.wire, "delta": delta})
            )
        return events + self._close()

    def _whole(self, part: Part) -> list[SseEvent]:
        block = PartEncoder(ReplayPolicy(), for_request=False).encode(part, "part")
        if block is None:
            return []
        wire = self._next
        self._next += 1
        return [
            _event({"type": "content_block_start", "index": wire, "content_block": block}),
            _event({"type": "content_block_stop", "index": wire}),
        ]

    def _close(self) -> list[SseEvent]:
        block = self._open
        if block is None:
            return []
        self._open = None
        self._closed.add(block.index)
        return [_event({"type": "content_block_stop", "index": block.wire})]

    def _finished(self, update: ResponseFinished) -> list[SseEvent]:
        events = self._ensure_started() + self._close()
        started = self._started or ResponseStarted()
        response = Response(
            message=Message(role="assistant", parts=tuple(self._parts)),
            finish_reason=update.finish_reason,
            native_finish_reason=update.native_finish_reason,
            extra={**started.extra, **update.extra},
        )
        own = own_extra(update.extra)
        delta: JsonObject = {"stop_reason": stop_reason(response)}
        delta["stop_sequence"] = own.get("stop_sequence")
        delta.update(object_entry(own, "fields"))
        usage = encode_usage(self._usage)
        self._ended = True
        events.append(_event({"type": "message_delta", "delta": delta, "usage": usage}))
        return [*events, _event({"type": "message_stop"})]

    def _failed(self, update: StreamFailed) -> list[SseEvent]:
        self._ended = True
        kind = update.code if update.code in _ERROR_TYPES else error_type(update.status or 500)
        error: JsonObject = {"type": kind, "message": update.message}
        return [_event({"type": "error", "error": error})]


def _citations(block: JsonObject) -> list[JsonValue]:
    value = block.get("citations")
    return list(value) if isinstance(value, list) else []
