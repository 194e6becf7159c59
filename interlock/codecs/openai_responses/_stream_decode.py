"""Responses SSE events → canonical stream updates (sans-I/O).

Parts are indexed in arrival order. Deltas are routed by ``item_id`` (function-call
argument deltas carry nothing else: trap 22) and by ``summary_index``/``content_index``
within an item. ``response.output_item.done`` is authoritative: the item is decoded with
the same code as a non-streamed response and every part is re-sent as
:class:`PartFinished`, so a folded stream equals the decoded ``response.completed``
snapshot. ``encrypted_content`` is therefore only ever taken from ``output_item.done`` or
the final snapshot, never from ``output_item.added`` (trap 2). The ``obfuscation`` padding
on delta events is ignored and never stored (trap 37). Event types this decoder has no
use for (hosted-tool progress, audio) are skipped: their items arrive whole in
``output_item.done``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from interlock.codecs._failures import failure
from interlock.codecs._json import loads
from interlock.codecs._logprobs import decode_openai_tokens
from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_responses._items import decode_output_item, function_call
from interlock.codecs.openai_responses._response import response_fields
from interlock.codecs.openai_responses._usage import decode_finish, decode_usage
from interlock.codecs.openai_responses._wire import (
    PROVIDER,
    as_list,
    as_object,
    optional_int,
    optional_str,
    required_str,
    string,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    Update,
    UsageUpdate,
)

_Key = tuple[str, int]
_DELTAS: dict[str, tuple[str, str | None]] = {
    # event type → (sub-part slot, the event field giving the position in that slot)
    "response.output_text.delta": ("c", "content_index"),
    "response.refusal.delta": ("c", "content_index"),
    "response.reasoning_text.delta": ("c", "content_index"),
    "response.reasoning_summary_text.delta": ("s", "summary_index"),
    "response.function_call_arguments.delta": ("x", None),
}


@dataclass(slots=True)
class _Item:
    """One output item being streamed: its id and the part index of each sub-part."""

    item_id: str | None
    item_type: str
    indexes: dict[_Key, int] = field(default_factory=dict[_Key, int])
    done: bool = False


def part_keys(parts: list[Part]) -> list[_Key]:
    """The sub-part key of each part of one item (summary/content position, encrypted, whole)."""
    keys: list[_Key] = []
    counts = {"s": 0, "c": 0}
    for part in parts:
        if isinstance(part, ReasoningPart) and part.reasoning_kind != "encrypted":
            slot = "s" if part.reasoning_kind == "summary" else "c"
            keys.append((slot, counts[slot]))
            counts[slot] += 1
        elif isinstance(part, TextPart | RefusalPart):
            keys.append(("c", counts["c"]))
            counts["c"] += 1
        else:
            keys.append(("x", 0))
    return keys


class StreamDecoder:
    """Feed Responses SSE events, get canonical updates; :meth:`finish` at end of stream."""

    def __init__(self, *, issuer: str = PROVIDER) -> None:
        self._issuer = issuer
        """The vendor whose stream this is: the label of its encrypted reasoning."""
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, int] = {}
        self._next_index = 0
        self._started = False
        self._ended = False
        self._has_calls = False

    def feed(self, event: SseEvent) -> list[Update]:
        """Decode one event; raises :class:`DecodeError` on malformed input."""
        data = _parse_event(event.data)
        kind = data.get("type")
        if type(kind) is not str:
            kind = required_str(data, "type", "event")
        route = _DELTAS.get(kind)
        if route is not None:
            # The hot path: most events of a stream are deltas.
            slot, position = route
            return self._delta(data, (slot, 0 if position is None else _int(data, position)), kind)
        return self._dispatch(kind, data)

    def finish(self) -> list[Update]:
        """End of input: a stream that never reached a terminal event failed."""
        if self._ended:
            return []
        self._ended = True
        return [
            StreamFailed(code="stream_truncated", message="stream ended before response.completed")
        ]

    def _dispatch(self, kind: str, data: JsonObject) -> list[Update]:
        match kind:
            case "response.created" | "response.in_progress" | "response.queued":
                return self._start(data)
            case "response.completed" | "response.incomplete":
                return self._complete(data)
            case "response.failed":
                return self._failed(data)
            case "error":
                self._ended = True
                return [failure(data.get("code"), optional_str(data, "message", "event") or "")]
            case "response.output_item.added":
                return self._item_added(data)
            case "response.output_item.done":
                index = _output_index(data)
                return self._item_done(index, data.get("item"), "event.item")
            case _:
                return self._sub_part(kind, data)

    def _sub_part(self, kind: str, data: JsonObject) -> list[Update]:
        match kind:
            case "response.content_part.added":
                return self._content_added(data)
            case "response.reasoning_summary_part.added":
                part = as_object(data.get("part"), "event.part")
                text = optional_str(part, "text", "event.part") or ""
                return self._open(data, ("s", _int(data, "summary_index")), "summary", text)
            case _:
                return []

    def _start(self, data: JsonObject) -> list[Update]:
        if self._started:
            return []
        self._started = True
        snapshot = as_object(data.get("response"), "event.response")
        return [
            ResponseStarted(
                id=optional_str(snapshot, "id", "event.response"),
                model=optional_str(snapshot, "model", "event.response"),
                created=optional_int(snapshot, "created_at", "event.response"),
            )
        ]

    def _item(self, data: JsonObject) -> tuple[int, _Item]:
        item_id = data.get("item_id")
        if isinstance(item_id, str) and item_id in self._by_id:
            index = self._by_id[item_id]
            return index, self._items[index]
        if "output_index" in data and _output_index(data) in self._items:
            index = _output_index(data)
            return index, self._items[index]
        raise DecodeError("event.item_id", f"event for an item that was never added: {item_id!r}")

    def _item_added(self, data: JsonObject) -> list[Update]:
        index = _output_index(data)
        item = as_object(data.get("item"), "event.item")
        item_id = optional_str(item, "id", "event.item")
        state = _Item(item_id=item_id, item_type=string(item.get("type"), "event.item.type"))
        self._items[index] = state
        if item_id is not None:
            self._by_id[item_id] = index
        if state.item_type != "function_call":
            return []
        self._has_calls = True
        call = function_call(item, "event.item")
        return [self._new_part(state, ("x", 0), call)]

    def _new_part(self, state: _Item, key: _Key, part: Part) -> PartStarted:
        index = self._next_index
        self._next_index += 1
        state.indexes[key] = index
        return PartStarted(index=index, part=part)

    def _content_added(self, data: JsonObject) -> list[Update]:
        part = as_object(data.get("part"), "event.part")
        kind = part.get("type")
        key = ("c", _int(data, "content_index"))
        if kind == "reasoning_text":
            return self._open(data, key, "raw", optional_str(part, "text", "event.part") or "")
        _, state = self._item(data)
        if kind == "refusal":
            text = optional_str(part, "refusal", "event.part") or ""
            return [self._new_part(state, key, RefusalPart(text=text, item_id=state.item_id))]
        text = optional_str(part, "text", "event.part") or ""
        return [self._new_part(state, key, TextPart(text=text, item_id=state.item_id))]

    def _open(self, data: JsonObject, key: _Key, kind: str, text: str) -> list[Update]:
        _, state = self._item(data)
        reasoning_kind = "summary" if kind == "summary" else "raw"
        part = ReasoningPart(reasoning_kind=reasoning_kind, text=text, item_id=state.item_id)
        return [self._new_part(state, key, part)]

    def _delta(self, data: JsonObject, key: _Key, kind: str) -> list[Update]:
        _, state = self._item(data)
        delta = data.get("delta")
        if type(delta) is not str:
            delta = required_str(data, "delta", "event")
        tokens = data.get("logprobs")
        logprobs = decode_openai_tokens(tokens, "event.logprobs") if tokens else ()
        index = state.indexes.get(key)
        if index is None:
            return [
                *self._implicit_part(state, key, kind),
                PartDelta(index=state.indexes[key], delta=delta, logprobs=logprobs),
            ]
        return [PartDelta(index=index, delta=delta, logprobs=logprobs)]

    def _implicit_part(self, state: _Item, key: _Key, kind: str) -> list[Update]:
        """A delta whose ``*.added`` event was skipped by the server: open the part now."""
        part: Part
        if "reasoning" in kind:
            slot = "summary" if "summary" in kind else "raw"
            part = ReasoningPart(reasoning_kind=slot, item_id=state.item_id)
        elif "refusal" in kind:
            part = RefusalPart(text="", item_id=state.item_id)
        elif "function_call" in kind:
            raise DecodeError(
                "event.item_id", "argument delta for an item that is not a function call"
            )
        else:
            part = TextPart(text="", item_id=state.item_id)
        return [self._new_part(state, key, part)]

    def _item_done(self, index: int, value: object, path: str) -> list[Update]:
        item = as_object(value, path)
        state = self._items.get(index)
        if state is None:
            item_id = optional_str(item, "id", path)
            state = _Item(item_id=item_id, item_type=string(item.get("type"), f"{path}.type"))
            self._items[index] = state
        if state.done:
            return []
        state.done = True
        parts = decode_output_item(item, path, self._issuer)
        updates: list[Update] = []
        for key, part in zip(part_keys(parts), parts, strict=True):
            if isinstance(part, ToolCallPart):
                self._has_calls = True
            if key not in state.indexes:
                updates.append(self._new_part(state, key, part))
            updates.append(PartFinished(index=state.indexes[key], part=part))
        return updates

    def _complete(self, data: JsonObject) -> list[Update]:
        snapshot = as_object(data.get("response"), "event.response")
        updates = self._start({"response": snapshot})
        output = as_list(snapshot.get("output", []), "event.response.output")
        for index, item in enumerate(output):
            updates.extend(self._item_done(index, item, f"event.response.output[{index}]"))
        usage = snapshot.get("usage")
        if usage is not None:
            updates.append(UsageUpdate(usage=decode_usage(usage, "event.response.usage")))
        details = snapshot.get("incomplete_details")
        reason = None
        if details is not None:
            reason = optional_str(
                as_object(details, "event.response.incomplete_details"), "reason", ""
            )
        status = optional_str(snapshot, "status", "event.response")
        finish, native = decode_finish(status, reason, self._has_calls)
        self._ended = True
        fields = response_fields(snapshot)
        extra = {"openai-responses": fields} if fields else {}
        updates.append(
            ResponseFinished(finish_reason=finish, native_finish_reason=native, extra=extra)
        )
        return updates

    def _failed(self, data: JsonObject) -> list[Update]:
        self._ended = True
        snapshot = as_object(data.get("response"), "event.response")
        error = snapshot.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = optional_str(error, "message", "event.response.error") or ""
            return [failure("failed" if code is None or code == "" else code, message)]
        return [StreamFailed(code="failed", message="response failed")]


_DONE: JsonObject = {"type": "[DONE]"}
"""``data: [DONE]`` read as an event no handler knows: it changes nothing."""


def _parse_event(text: str) -> JsonObject:
    """The event's JSON object; ``json.loads`` semantics and errors (:func:`loads`)."""
    try:
        value = loads(text)
    except json.JSONDecodeError as error:
        if text.strip() == "[DONE]":
            return _DONE  # Chat's end marker, sent after a Responses stream by OpenRouter
        raise DecodeError("event.data", f"malformed JSON: {error.msg}") from error
    return as_object(value, "event")


def _output_index(data: JsonObject) -> int:
    return _int(data, "output_index")


def _int(data: JsonObject, key: str) -> int:
    value = data.get(key)
    if type(value) is int:
        return value
    value = optional_int(data, key, "event")
    if value is None:
        raise DecodeError(f"event.{key}", "required integer field is missing")
    return value
