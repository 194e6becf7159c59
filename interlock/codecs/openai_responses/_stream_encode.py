"""Canonical stream updates → Responses SSE events (the official sequence).

``response.created`` → ``response.in_progress`` → per output item
``response.output_item.added`` → its sub-part events (``content_part.added`` /
``output_text.delta`` / ``output_text.done`` / ``content_part.done``; reasoning summary
parts; function-call argument deltas) → ``response.output_item.done`` →
``response.completed`` with the full snapshot. Every event carries ``type`` and a
``sequence_number`` from 0, and the SSE ``event:`` name equals ``type``. Parts are cut
into items by the same rule as non-streamed responses, and items without ids get the
same minted ids, so the final snapshot equals :func:`encode_response` of the fold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import assert_never, cast

from interlock.codecs._logprobs import encode_openai_tokens
from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_responses._content import encode_output_part
from interlock.codecs.openai_responses._render import ItemGroup, continues_item, render_group
from interlock.codecs.openai_responses._response import (
    foreign_opaque_only,
    response_object,
    with_item_ids,
)
from interlock.codecs.openai_responses._usage import encode_finish
from interlock.codecs.openai_responses._wire import PROVIDER
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    CandidateUpdate,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonValue,
    Message,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    Response,
    ResponseBuilder,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    Update,
    UsageUpdate,
)

_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""The event encoder (one instance: ``json.dumps`` with options builds one per call)."""


@dataclass(frozen=True, slots=True)
class _DeltaTemplate:
    """The fixed text around ``delta`` in one part's delta events.

    Valid while the part object and its slot are the ones it was built for; the event
    text is ``head + JSON(delta) + tail + sequence_number + "}"``, byte for byte what
    encoding the whole event object gives.
    """

    part: Part
    slot: int
    kind: str
    head: str
    tail: str


@dataclass(slots=True)
class _Open:
    """The output item being streamed."""

    group: ItemGroup
    output_index: int
    item_id: str | None
    slots: dict[int, int] = field(default_factory=dict[int, int])
    parts: dict[int, Part] = field(default_factory=dict[int, Part])
    finished: set[int] = field(default_factory=set[int])
    templates: dict[int, _DeltaTemplate] = field(default_factory=dict[int, _DeltaTemplate])
    superseded: bool = False
    closed: bool = False

    @property
    def complete(self) -> bool:
        """Every part started so far has finished."""
        return self.finished >= self.parts.keys()


def _position(item: _Open) -> int:
    return item.output_index


def _skipped(part: Part) -> bool:
    if isinstance(part, ApprovalRequestPart):
        return part.call.owner != "hosted"
    if isinstance(part, HostedToolPart):
        return part.provider != PROVIDER  # no Responses output type (see _response._is_output)
    if isinstance(part, ReasoningPart):
        return foreign_opaque_only(part)
    return isinstance(part, InputRequestPart | InputResponsePart | ApprovalResponsePart)


class StreamEncoder:
    """Turn canonical updates into Responses SSE events."""

    def __init__(self) -> None:
        self._sequence = 0
        self._builder = ResponseBuilder()
        self._open: _Open | None = None
        self._owner: dict[int, _Open] = {}
        self._last: Part | None = None
        self._items: list[JsonValue] = []
        self._response_id: str | None = None
        self._done = False

    def encode(self, update: Update) -> list[SseEvent]:
        """Events for one update."""
        self._builder.add(update)
        if type(update) is PartDelta:
            # The hot path: most updates of a stream are deltas.
            return self._part_delta(update.index, update.delta, update.logprobs)
        match update:
            case ResponseStarted():
                return self._started(update)
            case PartStarted(index=index, part=part):
                return self._part_started(index, part)
            case PartDelta(index=index, delta=delta, logprobs=tokens):
                return self._part_delta(index, delta, tokens)
            case PartFinished(index=index, part=part):
                return self._part_finished(index, part)
            case UsageUpdate():
                return []
            case ResponseFinished():
                return self._finished()
            case StreamFailed():
                self._done = True
                return [
                    self._event(
                        "error", {"code": update.code, "message": update.message, "param": None}
                    )
                ]
            case CandidateUpdate():
                return []  # one candidate per response: the gateway warns candidates_dropped
            case _:
                assert_never(update)

    def finish(self) -> list[SseEvent]:
        """Close the stream (a stream without a finish gets a completed snapshot)."""
        return [] if self._done else self._finished()

    def _event(self, kind: str, fields: JsonObject) -> SseEvent:
        payload: JsonObject = {"type": kind, **fields, "sequence_number": self._sequence}
        self._sequence += 1
        return SseEvent(data=_JSON.encode(payload), event=kind)

    def _snapshot(self, response: Response, items: list[JsonValue]) -> JsonObject:
        return response_object(response, items)

    def _started(self, update: ResponseStarted) -> list[SseEvent]:
        self._response_id = update.id
        empty = Response(
            message=Message(role="assistant", parts=()),
            id=update.id,
            model=update.model,
            created=update.created,
            extra=update.extra,
        )
        snapshot = self._snapshot(empty, [])
        return [
            self._event("response.created", {"response": snapshot}),
            self._event("response.in_progress", {"response": snapshot}),
        ]

    def _part_started(self, index: int, part: Part) -> list[SseEvent]:
        if _skipped(part):
            # Not sent, but it ends the item before it, as in a whole answer (group_parts).
            self._last = part
            return []
        events: list[SseEvent] = []
        current = self._open
        if current is None or not continues_item(self._last, part):
            if current is not None:
                # Items may interleave (parallel calls): close only once complete.
                current.superseded = True
                if current.complete:
                    events.extend(self._close(current))
            events.extend(self._open_item(index, part))
            current = self._open
        assert current is not None
        self._last = part
        self._owner[index] = current
        current.parts[index] = part
        events.extend(self._open_slot(current, index, part))
        return events

    def _open_item(self, index: int, part: Part) -> list[SseEvent]:
        group = ItemGroup(kind="single", start=index, parts=[part])
        if isinstance(part, TextPart | RefusalPart):
            group.kind = "message"
        elif isinstance(part, ReasoningPart):
            group.kind = "reasoning"
        output_index = len(self._items)
        self._items.append({})
        group = with_item_ids(group, self._response_id, output_index)
        item_id = getattr(group.parts[0], "item_id", None)
        self._open = _Open(group=group, output_index=output_index, item_id=item_id)
        skeleton: JsonObject
        match group.kind:
            case "message":
                skeleton = {"id": item_id, "type": "message", "status": "in_progress"}
                skeleton |= {"content": [], "role": "assistant"}
            case "reasoning":
                skeleton = {"id": item_id, "type": "reasoning", "summary": []}
            case "single":
                if not isinstance(part, ToolCallPart):
                    return []
                skeleton = {"id": item_id, "type": "function_call", "status": "in_progress"}
                skeleton |= {"arguments": "", "call_id": part.call_id, "name": part.name}
        return [
            self._event(
                "response.output_item.added", {"output_index": output_index, "item": skeleton}
            )
        ]

    def _where(self, current: _Open) -> JsonObject:
        return {"item_id": current.item_id, "output_index": current.output_index}

    def _open_slot(self, current: _Open, index: int, part: Part) -> list[SseEvent]:
        slot = len(current.slots)
        if isinstance(part, ReasoningPart):
            if part.reasoning_kind == "encrypted":
                return []
            slot = sum(
                1
                for other, _ in current.slots.items()
                if getattr(current.parts[other], "reasoning_kind", None) == part.reasoning_kind
            )
        current.slots[index] = slot
        where = self._where(current)
        match part:
            case TextPart() | RefusalPart():
                blank = TextPart(text="") if isinstance(part, TextPart) else RefusalPart(text="")
                empty: JsonObject = encode_output_part(blank)
                added = self._event(
                    "response.content_part.added", {**where, "content_index": slot, "part": empty}
                )
            case ReasoningPart(reasoning_kind="summary"):
                empty = {"type": "summary_text", "text": ""}
                added = self._event(
                    "response.reasoning_summary_part.added",
                    {**where, "summary_index": slot, "part": empty},
                )
            case ReasoningPart():
                empty = {"type": "reasoning_text", "text": ""}
                added = self._event(
                    "response.content_part.added", {**where, "content_index": slot, "part": empty}
                )
            case ToolCallPart():
                return self._part_delta(index, part.arguments) if part.arguments else []
            case _:
                return []
        text = getattr(part, "text", "")
        tokens = part.logprobs if isinstance(part, TextPart) else ()
        return [added, *(self._part_delta(index, text, tokens) if text else [])]

    def _part_delta(
        self, index: int, delta: str, tokens: tuple[TokenLogprob, ...] = ()
    ) -> list[SseEvent]:
        current = self._owner.get(index)
        if current is None:
            return []
        part = current.parts[index]
        slot = current.slots.get(index, 0)
        template = current.templates.get(index)
        if template is None or template.part is not part or template.slot != slot:
            template = self._delta_template(current, part, slot)
            if template is None:
                return []
            current.templates[index] = template
        tail = template.tail
        if tokens and isinstance(part, TextPart):
            written = _JSON.encode(encode_openai_tokens(tokens, with_bytes=False, top_bytes=False))
            tail = f',"logprobs":{written},"sequence_number":'
        data = f"{template.head}{encode_basestring(delta)}{tail}{self._sequence}}}"
        self._sequence += 1
        return [SseEvent(data=data, event=template.kind)]

    def _delta_template(self, current: _Open, part: Part, slot: int) -> _DeltaTemplate | None:
        """The delta event of ``part`` around its ``delta`` (``None``: no delta events)."""
        before = self._where(current)
        after: JsonObject = {}
        match part:
            case TextPart():
                kind = "response.output_text.delta"
                before["content_index"] = slot
                after["logprobs"] = []
            case RefusalPart():
                kind = "response.refusal.delta"
                before["content_index"] = slot
            case ReasoningPart(reasoning_kind="summary"):
                kind = "response.reasoning_summary_text.delta"
                before["summary_index"] = slot
            case ReasoningPart(reasoning_kind="raw"):
                kind = "response.reasoning_text.delta"
                before["content_index"] = slot
            case ToolCallPart():
                kind = "response.function_call_arguments.delta"
            case _:
                return None
        head = _JSON.encode({"type": kind, **before})[:-1] + ',"delta":'
        tail = "," + _JSON.encode(after)[1:-1] if after else ""
        return _DeltaTemplate(
            part=part, slot=slot, kind=kind, head=head, tail=f'{tail},"sequence_number":'
        )

    def _part_finished(self, index: int, part: Part) -> list[SseEvent]:
        if index not in self._owner and not _skipped(part):
            events = self._part_started(index, part)
            return events + self._part_finished(index, part)
        current = self._owner.get(index)
        if current is None:
            return []
        current.parts[index] = part
        current.finished.add(index)
        events = self._sub_part_done(current, index, part)
        if current.complete and (current.superseded or current.group.kind == "single"):
            events.extend(self._close(current))
        return events

    def _sub_part_done(self, current: _Open, index: int, part: Part) -> list[SseEvent]:
        where = self._where(current)
        slot = current.slots.get(index, 0)
        match part:
            case TextPart() | RefusalPart():
                final = encode_output_part(part)
                if isinstance(part, TextPart):
                    done = self._event(
                        "response.output_text.done",
                        {
                            **where,
                            "content_index": slot,
                            "text": part.text,
                            "logprobs": encode_openai_tokens(
                                part.logprobs, with_bytes=False, top_bytes=False
                            ),
                        },
                    )
                else:
                    done = self._event(
                        "response.refusal.done",
                        {**where, "content_index": slot, "refusal": part.text},
                    )
                return [
                    done,
                    self._event(
                        "response.content_part.done",
                        {**where, "content_index": slot, "part": final},
                    ),
                ]
            case ReasoningPart(reasoning_kind="summary"):
                final: JsonObject = {"type": "summary_text", "text": part.text}
                return [
                    self._event(
                        "response.reasoning_summary_text.done",
                        {**where, "summary_index": slot, "text": part.text},
                    ),
                    self._event(
                        "response.reasoning_summary_part.done",
                        {**where, "summary_index": slot, "part": final},
                    ),
                ]
            case ReasoningPart(reasoning_kind="raw"):
                final = cast(JsonObject, {"type": "reasoning_text", "text": part.text})
                return [
                    self._event(
                        "response.reasoning_text.done",
                        {**where, "content_index": slot, "text": part.text},
                    ),
                    self._event(
                        "response.content_part.done",
                        {**where, "content_index": slot, "part": final},
                    ),
                ]
            case ToolCallPart():
                return [
                    self._event(
                        "response.function_call_arguments.done",
                        {**where, "arguments": part.arguments},
                    )
                ]
            case _:
                return []

    def _close(self, current: _Open) -> list[SseEvent]:
        if current.closed:
            return []
        current.closed = True
        if self._open is current:
            self._open = None
        parts = [current.parts[index] for index in sorted(current.parts)]
        group = with_item_ids(
            ItemGroup(kind=current.group.kind, start=current.group.start, parts=parts),
            self._response_id,
            current.output_index,
        )
        item = render_group(group) or {}
        self._items[current.output_index] = item
        where: JsonObject = {"output_index": current.output_index, "item": item}
        events: list[SseEvent] = []
        if group.kind == "single" and not isinstance(parts[0], ToolCallPart):
            events.append(self._event("response.output_item.added", where))
        events.append(self._event("response.output_item.done", where))
        return events

    def _close_all(self) -> list[SseEvent]:
        opened = sorted({id(item): item for item in self._owner.values()}.values(), key=_position)
        return [event for current in opened for event in self._close(current)]

    def _finished(self) -> list[SseEvent]:
        events = self._close_all()
        self._done = True
        response = self._builder.build()
        snapshot = self._snapshot(response, self._items)
        status, _ = encode_finish(response.finish_reason, response.native_finish_reason)
        kind = {"incomplete": "response.incomplete", "failed": "response.failed"}.get(
            status, "response.completed"
        )
        events.append(self._event(kind, {"response": snapshot}))
        return events
