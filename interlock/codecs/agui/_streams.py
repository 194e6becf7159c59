"""The wire streams of a model step's parts: text, reasoning and tool-call events.

:class:`StepStreams` is the half of :class:`~interlock.codecs.agui._encoder.AguiEventEncoder`
that opens, feeds and closes the event streams of the current model step's parts; the
encoder adds the run's lifecycle and facts on top. Sans-I/O: the only clock is the injected
one. Its invariants:

- a part's stream is open from its start event to its end event, and every delta is
  non-empty and goes to an open text, reasoning or tool-call stream (anything else raises
  :class:`EncoderStateError`);
- a step's text parts share the step's assistant message until a signed text part ends,
  after which the next text opens a new message id; reasoning parts of a step share one
  reasoning span (``REASONING_START`` … ``REASONING_END``);
- tool calls carry their step's message as ``parentMessageId``; calls of client-owned
  tools are remembered in order for the run's pending ids;
- ids are minted ``{base or runId}:{label}{n}`` with one counter per run; signatures and
  opaque payloads leave only sealed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, assert_never

from interlock.codecs.agui import _events
from interlock.codecs.agui._labels import (
    LABEL_KEY,
    call_labels,
    content_layout,
    needs_layout,
    reasoning_labels,
)
from interlock.codecs.agui._seal import reasoning_attributes, seal_outbound
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
)

_Stream: TypeAlias = Literal["text", "reasoning", "tool_call", "other"]


class EncoderStateError(RuntimeError):
    """An event was requested that the run's state forbids (e.g. anything after the end)."""


@dataclass(slots=True)
class OpenPart:
    """A part of the current model step whose wire stream is open."""

    stream: _Stream
    wire_id: str
    part: Part
    chunks: list[str] = field(default_factory=list[str])

    @property
    def sent(self) -> str:
        """Everything streamed so far (joined once; appending stays linear in the text)."""
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


class StepStreams:
    """Per-run state of the model steps' part streams (see the module docstring).

    ``seal_key``/``tenant`` seal opaque payloads (required only if one appears);
    ``client_tools`` names the frontend tools; ``clock`` returns integer epoch milliseconds.
    """

    def __init__(
        self,
        *,
        run_id: str,
        seal_key: bytes | None,
        tenant: str,
        client_tools: Collection[str],
        clock: Callable[[], int] | None,
    ) -> None:
        self.run_id = run_id
        self._seal_key = seal_key
        self._tenant = tenant
        self._client_tools = frozenset(client_tools)
        self._clock = clock
        self._counter = 0
        self._message_ids: list[str] = []
        self._message_id: str | None = None
        self._message_signed = False
        self._texts: list[TextPart | RefusalPart] = []
        self._span_id: str | None = None
        self._open: dict[int, OpenPart] = {}
        self._done: set[int] = set()
        self._model: str | None = None
        self._step_base: str | None = None
        self._call_parents: dict[str, str] = {}
        self._client_calls: list[str] = []

    @property
    def message_ids(self) -> tuple[str, ...]:
        """The assistant message ids minted this run, one per model step, in order.

        A gateway that stores the step under the same ``Message.id`` keeps later
        ``MESSAGES_SNAPSHOT`` events aligned with what the client already holds.
        """
        return tuple(self._message_ids)

    def _mint(self, label: str, base: str | None = None) -> str:
        self._counter += 1
        return f"{base or self.run_id}:{label}{self._counter}"

    def _emit(self, type_: str, fields: Mapping[str, JsonValue]) -> JsonObject:
        built = _events.event(type_, fields)
        if self._clock is not None:
            built["timestamp"] = int(self._clock())
        return built

    def _stamp(self, built: JsonObject) -> JsonObject:
        if self._clock is not None:
            built["timestamp"] = int(self._clock())
        return built

    def _seal(self, opaque: Opaque, attributes: Mapping[str, str] | None = None) -> str:
        return seal_outbound(opaque, key=self._seal_key, tenant=self._tenant, attributes=attributes)

    # ---------------------------------------------------------- part streams

    def _begin_step(self, model: str | None) -> None:
        self._message_id = self._step_id()
        self._message_ids.append(self._message_id)
        self._message_signed = False
        self._texts = []
        self._model = model
        self._open.clear()
        self._done.clear()

    def _step_id(self) -> str:
        """The stored step's id the first time, then ids derived from it (or minted)."""
        base = self._step_base
        if base is not None and base not in self._message_ids:
            return base
        return self._mint("a", base)

    def _ensure_step(self) -> str:
        if self._message_id is None:
            self._begin_step(None)
        assert self._message_id is not None
        return self._message_id

    def _close_open(self) -> list[JsonObject]:
        """Close every part stream still open, in part order, then the reasoning span."""
        events: list[JsonObject] = []
        for index in sorted(self._open):
            events += self._close(index, self._open[index].part)
        return events + self._close_span()

    def _close_span(self) -> list[JsonObject]:
        if self._span_id is None:
            return []
        span, self._span_id = self._span_id, None
        return [self._emit("REASONING_END", {"messageId": span})]

    def _close_call(self, call_id: str) -> list[JsonObject]:
        for index, open_part in self._open.items():
            if open_part.stream == "tool_call" and open_part.wire_id == call_id:
                return self._close(index, open_part.part)
        return []

    def _start_text(self, index: int, part: TextPart | RefusalPart) -> list[JsonObject]:
        if self._message_signed:
            self._message_id = self._mint("a", self._step_base)
            self._message_ids.append(self._message_id)
            self._message_signed = False
            self._texts = []
        message_id = self._ensure_step()
        self._open[index] = OpenPart(stream="text", wire_id=message_id, part=part)
        events = [self._emit("TEXT_MESSAGE_START", {"messageId": message_id, "role": "assistant"})]
        return events + self._part_delta(index, part.text)

    def _start_reasoning(self, index: int, part: ReasoningPart) -> list[JsonObject]:
        events: list[JsonObject] = []
        if self._span_id is None:
            self._span_id = self._mint("s", self._step_base)
            events.append(self._emit("REASONING_START", {"messageId": self._span_id}))
        base = self._step_base
        message_id = self._mint("r") if base is None else f"{base}:r{index}"
        self._open[index] = OpenPart(stream="reasoning", wire_id=message_id, part=part)
        start: dict[str, JsonValue] = {"messageId": message_id, "role": "reasoning"}
        events.append(self._emit("REASONING_MESSAGE_START", start))
        return events + self._part_delta(index, part.text)

    def _start_call(self, index: int, part: ToolCallPart, message_id: str) -> list[JsonObject]:
        self._open[index] = OpenPart(stream="tool_call", wire_id=part.call_id, part=part)
        self._call_parents[part.call_id] = message_id
        if part.owner == "client" or part.name in self._client_tools:
            self._client_calls.append(part.call_id)
        start: dict[str, JsonValue] = {
            "toolCallId": part.call_id,
            "toolCallName": part.name,
            "parentMessageId": message_id,
            "metadata": labelled(call_labels(part)),
        }
        return [self._emit("TOOL_CALL_START", start), *self._part_delta(index, part.arguments)]

    def _part_delta(self, index: int, delta: str) -> list[JsonObject]:
        open_part = self._open.get(index)
        if open_part is None:
            raise EncoderStateError(f"a delta for part {index}, which is not open")
        if not delta:
            return []
        open_part.chunks.append(delta)
        built: JsonObject
        match open_part.stream:
            case "text":
                built = {"type": "TEXT_MESSAGE_CONTENT", "messageId": open_part.wire_id}
            case "reasoning":
                built = {"type": "REASONING_MESSAGE_CONTENT", "messageId": open_part.wire_id}
            case "tool_call":
                built = {"type": "TOOL_CALL_ARGS", "toolCallId": open_part.wire_id}
            case "other":
                raise EncoderStateError(f"part {index} ({open_part.part.kind}) takes no deltas")
            case _:
                assert_never(open_part.stream)
        built["delta"] = delta
        if self._clock is not None:  # _stamp without its call: once per streamed delta
            built["timestamp"] = int(self._clock())
        return [built]

    def _close(self, index: int, part: Part) -> list[JsonObject]:
        """End the wire stream of part ``index``; ``part`` is authoritative for payloads."""
        open_part = self._open.pop(index)
        self._done.add(index)
        wire_id = open_part.wire_id
        match open_part.stream:
            case "text":
                layout = self._text_layout(part, open_part.sent)
                end = {"messageId": wire_id, "metadata": layout}
                events = [self._emit("TEXT_MESSAGE_END", end)]
                if isinstance(part, TextPart) and part.signature is not None:
                    self._message_signed = True
                    events.append(self._encrypted("message", wire_id, part.signature))
                return events
            case "reasoning":
                labels = reasoning_labels(part) if isinstance(part, ReasoningPart) else None
                end = {"messageId": wire_id, "metadata": labelled(labels)}
                events = [self._emit("REASONING_MESSAGE_END", end)]
                if isinstance(part, ReasoningPart) and part.opaque is not None:
                    attributes = reasoning_attributes(part)
                    events.append(self._encrypted("message", wire_id, part.opaque, attributes))
                return events
            case "tool_call":
                events = [self._emit("TOOL_CALL_END", {"toolCallId": wire_id})]
                if isinstance(part, ToolCallPart) and part.signature is not None:
                    events.append(self._encrypted("tool-call", wire_id, part.signature))
                return events
            case "other":
                return []
            case _:
                assert_never(open_part.stream)

    def _text_layout(self, part: Part, sent: str) -> JsonObject | None:
        """The layout label of the current message once ``part`` ends (``None``: not needed).

        Lengths are of what was sent (the client's ``content``); the signature travels as
        the message's own encrypted value, so the entries carry none.
        """
        if not isinstance(part, TextPart | RefusalPart):
            return None
        self._texts.append(
            RefusalPart(text=sent) if isinstance(part, RefusalPart) else TextPart(text=sent)
        )
        if not needs_layout(self._texts):
            return None
        return {LABEL_KEY: {"content": content_layout(self._texts, self._seal)}}

    def _encrypted(
        self,
        subtype: _events.EncryptedSubtype,
        entity_id: str,
        opaque: Opaque,
        attributes: Mapping[str, str] | None = None,
    ) -> JsonObject:
        return self._stamp(
            _events.encrypted_value(subtype, entity_id, self._seal(opaque, attributes))
        )


def labelled(labels: JsonObject | None) -> JsonObject | None:
    """An event's ``metadata`` holding this codec's ``labels`` (``None``: no labels)."""
    return {LABEL_KEY: labels} if labels else None


def streamed_text(part: Part) -> str | None:
    if isinstance(part, TextPart | RefusalPart | ReasoningPart):
        return part.text
    if isinstance(part, ToolCallPart):
        return part.arguments
    return None
