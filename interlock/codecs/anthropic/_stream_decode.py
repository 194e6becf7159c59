"""Messages API SSE events → canonical stream updates (sans-I/O).

Events are decoded by their JSON ``type`` (the ``event:`` name is not needed). Block
``index`` is the part index. Text, thinking text and tool input stream as deltas; the
thinking signature (``signature_delta``) and citations (``citations_delta``) are collected
and land on the part in its ``PartFinished``. A ``tool_use`` start's ``input: {}`` is a
placeholder, never the value (trap A10). Blocks with no deltas of their own
(``redacted_thinking``, server-tool results, unknown types) and ``server_tool_use`` (a hosted
part) arrive whole at ``content_block_stop``. ``message_delta`` usage overwrites the
``message_start`` values it carries and leaves the others (trap A28). ``ping`` and unknown
events are ignored; ``error`` ends the stream with :class:`StreamFailed`, and so does an
input that ends before ``message_stop``. A thinking block cut before its signature has no
opaque, so it is never replayed with an empty signature (trap A17).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import cast

from interlock.codecs._failures import failure
from interlock.codecs._json import loads
from interlock.codecs._sse import SseEvent
from interlock.codecs.anthropic._blocks import compact, decode_block
from interlock.codecs.anthropic._response import finish_reason
from interlock.codecs.anthropic._usage import decode_usage
from interlock.codecs.anthropic._wire import (
    DIALECT,
    PROVIDER,
    as_int,
    as_object,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    ToolCallPart,
    Update,
    UsageUpdate,
)

_STREAMED = ("text", "thinking", "tool_use")


@dataclass(slots=True)
class _Block:
    """One open content block: its start and what its deltas brought."""

    start: JsonObject
    chunks: list[str] = field(default_factory=list[str])
    signature: str = ""
    citations: list[JsonValue] = field(default_factory=list[JsonValue])


_DELTA_TEXT = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "input_json_delta": "partial_json",
}
"""The field holding the text of each streamed delta type."""


class StreamDecoder:
    """Feed SSE events in order; get canonical updates back (signatures named as issued by
    vendor ``issuer``, the service streaming)."""

    __slots__ = ("_blocks", "_ended", "_finish", "_issuer", "_usage")

    def __init__(self, issuer: str = PROVIDER) -> None:
        self._issuer = issuer
        self._blocks: dict[int, _Block] = {}
        self._usage: JsonObject = {}
        self._finish: JsonObject = {}
        self._ended = False

    def feed(self, event: SseEvent) -> list[Update]:
        """The updates one event carries; raises :class:`DecodeError` on malformed data."""
        try:
            data = loads(event.data)
        except json.JSONDecodeError as error:
            raise DecodeError("event.data", f"not JSON: {error.msg}") from error
        body = as_object(data, "event")
        match body.get("type"):
            case "message_start":
                return self._start(as_object(body.get("message"), "message_start.message"))
            case "content_block_start":
                return self._block_start(body)
            case "content_block_delta":
                return self._delta(body)
            case "content_block_stop":
                return self._block_stop(body)
            case "message_delta":
                return self._message_delta(body)
            case "message_stop":
                return self._stop()
            case "error":
                return self._error(body)
            case _:
                return []  # ping, and event types added later

    def finish(self) -> list[Update]:
        """End of input: a stream that never reached ``message_stop`` failed."""
        if self._ended:
            return []
        self._ended = True
        return [StreamFailed(code="stream_truncated", message="stream ended before message_stop")]

    def _start(self, message: JsonObject) -> list[Update]:
        rest = {
            key: value
            for key, value in message.items()
            if key not in ("id", "type", "role", "model", "content", "stop_reason", "usage")
            and key != "stop_sequence"
        }
        message_id, model = message.get("id"), message.get("model")
        updates: list[Update] = [
            ResponseStarted(
                id=message_id if isinstance(message_id, str) else None,
                model=model if isinstance(model, str) else None,
                extra={DIALECT: {"fields": rest}} if rest else {},
            )
        ]
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._usage = dict(usage)
            updates.append(UsageUpdate(usage=decode_usage(self._usage, "message_start.usage")))
        content = message.get("content")
        for index, block in enumerate(
            cast(list[JsonValue], content) if isinstance(content, list) else []
        ):
            part = decode_block(block, f"message_start.message.content[{index}]", self._issuer)
            updates += [PartStarted(index=index, part=part), PartFinished(index=index, part=part)]
        if isinstance(message.get("stop_reason"), str):
            self._finish["stop_reason"] = message["stop_reason"]
        return updates

    def _block_start(self, body: JsonObject) -> list[Update]:
        index = as_int(body.get("index"), "content_block_start.index")
        start = as_object(body.get("content_block"), "content_block_start.content_block")
        self._blocks[index] = _Block(start=start)
        kind = start.get("type")
        if kind not in _STREAMED:
            return []
        if kind == "tool_use":
            placeholder = {**start, "input": {}}
            call = decode_block(placeholder, "content_block_start.content_block")
            assert isinstance(call, ToolCallPart)
            given = start.get("input")
            arguments = compact(given) if isinstance(given, dict) and given else ""
            return [PartStarted(index=index, part=replace(call, arguments=arguments))]
        seed = {**start, "signature": ""} if kind == "thinking" else start
        return [
            PartStarted(index=index, part=decode_block(seed, "content_block_start.content_block"))
        ]

    def _delta(self, body: JsonObject) -> list[Update]:
        index = as_int(body.get("index"), "content_block_delta.index")
        block = self._blocks.get(index)
        if block is None:
            raise DecodeError(
                "content_block_delta.index", f"delta for block {index} before its start"
            )
        delta = as_object(body.get("delta"), "content_block_delta.delta")
        key = _DELTA_TEXT
        kind = delta.get("type")
        if kind == "signature_delta":
            block.signature += str(delta.get("signature") or "")
            return []
        if kind == "citations_delta":
            block.citations.append(delta.get("citation"))
            return []
        if not isinstance(kind, str) or kind not in key:
            return []  # delta types added later
        text = delta.get(key[kind])
        if not isinstance(text, str):
            raise DecodeError(f"content_block_delta.delta.{key[kind]}", "expected a string")
        block.chunks.append(text)
        if block.start.get("type") in _STREAMED and text:
            return [PartDelta(index=index, delta=text)]
        return []

    def _block_stop(self, body: JsonObject) -> list[Update]:
        index = as_int(body.get("index"), "content_block_stop.index")
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        part = _finished_part(block, self._issuer)
        if block.start.get("type") in _STREAMED:
            return [PartFinished(index=index, part=part)]
        return [PartStarted(index=index, part=part), PartFinished(index=index, part=part)]

    def _message_delta(self, body: JsonObject) -> list[Update]:
        delta = body.get("delta")
        if isinstance(delta, dict):
            self._finish.update(delta)
        usage = body.get("usage")
        if not isinstance(usage, dict):
            return []
        self._usage.update({key: value for key, value in usage.items() if value is not None})
        return [UsageUpdate(usage=decode_usage(self._usage, "message_delta.usage"))]

    def _stop(self) -> list[Update]:
        self._ended = True
        native = self._finish.get("stop_reason")
        native_text = native if isinstance(native, str) else None
        rest = {k: v for k, v in self._finish.items() if k not in ("stop_reason", "stop_sequence")}
        own: JsonObject = {"stop_sequence": self._finish.get("stop_sequence")}
        if rest:
            own["fields"] = rest
        return [
            ResponseFinished(
                finish_reason=finish_reason(native_text),
                native_finish_reason=native_text,
                extra={DIALECT: own},
            )
        ]

    def _error(self, body: JsonObject) -> list[Update]:
        self._ended = True
        error = body.get("error")
        details = error if isinstance(error, dict) else {}
        return [failure(details.get("type"), str(details.get("message") or ""))]


def _finished_part(block: _Block, issuer: str) -> Part:
    """The complete part of a block at ``content_block_stop``."""
    start = block.start
    joined = "".join(block.chunks)
    match start.get("type"):
        case "text":
            whole = {**start, "text": joined}
            if block.citations:
                whole["citations"] = [*_list(start.get("citations")), *block.citations]
            return decode_block(whole, "content_block")
        case "thinking":
            whole = {**start, "thinking": joined, "signature": block.signature}
            return decode_block(whole, "content_block", issuer)
        case "tool_use":
            call = decode_block({**start, "input": {}}, "content_block")
            assert isinstance(call, ToolCallPart)
            given = start.get("input")
            arguments = joined if joined.strip() else (compact(given) if given else "{}")
            return replace(call, arguments=arguments)
        case _:
            whole = dict(start)
            if joined.strip():
                try:
                    whole["input"] = loads(joined)
                except json.JSONDecodeError as error:
                    raise DecodeError("content_block.input", f"not JSON: {error.msg}") from error
            return decode_block(whole, "content_block", issuer)


def _list(value: JsonValue) -> list[JsonValue]:
    return cast(list[JsonValue], value) if isinstance(value, list) else []
