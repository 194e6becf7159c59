"""Transcript updates → official-shaped ``chat.completion.chunk`` SSE events.

The stream opens with a role chunk (``{"role": "assistant", "content": ""}``), carries one
chunk per started part or delta, ends with a finish chunk (empty delta), an optional
usage chunk (empty ``choices``; only when the client asked for
``stream_options.include_usage``) and ``data: [DONE]``. Reasoning and kept fields are
written per the reasoning dialect, exactly as :func:`encode_response` would; what a final
:class:`PartFinished` adds that was never streamed (a late signature, arguments sent only
whole) goes out as one more delta.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import assert_never

from interlock.codecs._logprobs import encode_openai_tokens
from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat._citations import encode_annotations, shift_citations
from interlock.codecs.openai_chat._errors import failure_body
from interlock.codecs.openai_chat._executed import FIELD as EXECUTED
from interlock.codecs.openai_chat._executed import (
    GROQ_END,
    groq_fields,
    is_executed,
    is_listed,
)
from interlock.codecs.openai_chat._fields import FieldPolicy, admits
from interlock.codecs.openai_chat._finish import encode_finish_reason
from interlock.codecs.openai_chat._reasoning import (
    DETAIL_TEXT_FIELDS,
    RAW_CARRIERS,
    carries_google,
    own_detail,
    part_dialect,
    put_google_signature,
    synthesized_detail,
)
from interlock.codecs.openai_chat._thinking import CARRIER, delta_piece, in_content
from interlock.codecs.openai_chat._tools import encode_tool_call
from interlock.codecs.openai_chat._usage import encode_usage
from interlock.codecs.openai_chat._wire import ReasoningDialect, extra_of
from interlock.transcript import (
    CandidateUpdate,
    HostedToolPart,
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
    TokenLogprob,
    ToolCallPart,
    Update,
    Usage,
    UsageUpdate,
)

DONE = SseEvent(data="[DONE]")


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""Compact JSON, with one encoder built once (``json.dumps`` with options builds one per call)."""
_string = encode_basestring
"""A string as :data:`_dumps` writes it (the function it calls for every string)."""


@dataclass(slots=True)
class _Open:
    """What has been streamed of one part: its delta builder and the text sent so far.

    The text sent is kept as pieces and joined once when the part finishes: appending to one
    string on every delta would copy the whole text each time (quadratic in a long answer)."""

    carrier: str  # "content" | "refusal" | a raw reasoning key | "details" | "call" |
    # "executed" (a Groq executed tool, sent whole when finished) | "listed" (Groq's
    # discovered MCP tools, a chunk of their own when started) | "hidden"
    sent: list[str] = field(default_factory=list[str])
    template: JsonObject | None = None
    text_field: str | None = None
    call_index: int = 0
    signed: bool = False
    offset: int = 0  # where a text part starts in the message's one content string
    tokens: int = 0  # how many of a text part's token log-probabilities were sent


class StreamEncoder:
    """Encode updates as Chat chunks for a client of ``reasoning_dialect``."""

    def __init__(
        self, *, reasoning_dialect: ReasoningDialect | None = None, include_usage: bool = False
    ) -> None:
        self._dialect: ReasoningDialect | None = reasoning_dialect
        self._fields = FieldPolicy(dialect=reasoning_dialect, request=False)
        self._include_usage = include_usage
        self._head = self._make_head("chatcmpl-interlock", None, 0, {})
        self._open: dict[int, _Open] = {}
        self._calls = 0
        self._content_length = 0  # characters streamed as content so far
        self._usage: Usage | None = None
        self._finished = False
        self._groq_end: JsonObject | None = None
        self._index = 0
        """The choice this encoder writes (another candidate's encoder writes its own)."""
        self._others: dict[int, StreamEncoder] = {}

    @staticmethod
    def _make_head(id_: str, model: str | None, created: int, unknown: JsonObject) -> str:
        head: JsonObject = {
            "id": id_,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model or "",
            **unknown,
        }
        return _dumps(head)[:-1] + ',"choices":'

    def _chunk(
        self,
        delta: JsonObject,
        finish: str | None = None,
        x_groq: JsonObject | None = None,
        tokens: tuple[TokenLogprob, ...] = (),
    ) -> SseEvent:
        reason = "null" if finish is None else _dumps(finish)
        groq = f',"x_groq":{_dumps(x_groq)}' if x_groq else ""
        logprobs = ""
        if tokens:
            content = _dumps(encode_openai_tokens(tokens))
            logprobs = f',"logprobs":{{"content":{content},"refusal":null}}'
        choice = f'"index":{self._index},"delta":{_dumps(delta)}{logprobs}'
        return SseEvent(data=f'{self._head}[{{{choice},"finish_reason":{reason}}}]{groq}}}')

    def _written(self, delta: str) -> SseEvent:
        """:meth:`_chunk` of a delta already written as compact JSON (no finish reason)."""
        choice = f'"index":{self._index},"delta":{delta},"finish_reason":null'
        return SseEvent(data=f"{self._head}[{{{choice}}}]}}")

    def encode(self, update: Update) -> list[SseEvent]:
        """The events for one update."""
        match update:
            case ResponseStarted():
                unknown = extra_of(self._fields.kept(update.extra, "response", ""))
                self._groq_end = update.extra.get(GROQ_END)  # a whole response's updates
                self._head = self._make_head(
                    update.id or "chatcmpl-interlock", update.model, update.created or 0, unknown
                )
                return [self._chunk({"role": "assistant", "content": ""})]
            case PartStarted(index=index, part=part):
                return self._started(index, part)
            case PartDelta(index=index, delta=delta, logprobs=()):
                return self._delta(index, delta)
            case PartDelta(index=index, delta=delta, logprobs=tokens):
                return self._delta_with_tokens(index, delta, tokens)
            case PartFinished(index=index, part=part):
                return self._finished_part(index, part)
            case UsageUpdate(usage=usage):
                self._usage = usage
                return []
            case ResponseFinished():
                self._finished = True
                if update.finish_reason is None and update.native_finish_reason is None:
                    return []  # a stream that ended on [DONE] alone (OpenRouter): no reason
                reason = encode_finish_reason(update.finish_reason, update.native_finish_reason)
                groq = update.extra.get(GROQ_END) or self._groq_end or {}
                groq = {**groq, **groq_fields((), self._usage, self._fields)}  # the breakdown
                return [self._chunk({}, reason, groq)]
            case StreamFailed():
                return [SseEvent(data=_dumps({"error": failure_body(update)}))]
            case CandidateUpdate():
                return self._candidate(update)
            case _:
                assert_never(update)

    def _candidate(self, update: CandidateUpdate) -> list[SseEvent]:
        """Another candidate's update, as a chunk of choice ``update.candidate`` (its first
        opens with a role chunk of its own)."""
        events: list[SseEvent] = []
        other = self._others.get(update.candidate)
        if other is None:
            other = StreamEncoder(reasoning_dialect=self._dialect)
            other._index, other._head = update.candidate, self._head
            self._others[update.candidate] = other
            events.append(other._chunk({"role": "assistant", "content": ""}))
        return events + other.encode(update.update)

    def _delta_with_tokens(
        self, index: int, text: str, tokens: tuple[TokenLogprob, ...]
    ) -> list[SseEvent]:
        """A text delta with its tokens' log-probabilities (``choices[].logprobs``)."""
        state = self._open.get(index)
        if state is None or state.carrier != "content":
            return self._delta(index, text)
        state.sent.append(text)
        self._content_length += len(text)
        state.tokens += len(tokens)
        return [self._chunk({"content": text} if text else {}, tokens=tokens)]

    def finish(self) -> list[SseEvent]:
        """The usage chunk (when asked for and known) and ``[DONE]``."""
        events: list[SseEvent] = []
        if self._include_usage and self._usage is not None:
            usage = _dumps(encode_usage(self._usage, self._fields))
            events.append(SseEvent(data=f'{self._head}[],"usage":{usage}}}'))
        events.append(DONE)
        return events

    def _started(self, index: int, part: Part) -> list[SseEvent]:
        state = self._state_for(part)
        self._open[index] = state
        delta: JsonObject = {}
        match state.carrier:
            case "call":
                assert isinstance(part, ToolCallPart)
                wire = encode_tool_call(part, self._fields)
                state.sent = [part.arguments]
                state.signed = self._sign(wire, part)
                wire.pop("index", None)  # the stream's own position wins over a kept one
                delta["tool_calls"] = [{"index": state.call_index, **wire}]
            case "details":
                assert isinstance(part, ReasoningPart)
                return self._detail_start(state, part)
            case "listed":
                assert isinstance(part, HostedToolPart)
                return self._listed(part)
            case "hidden" | "executed":
                return []
            case _:
                delta = self._text_delta(state, part, getattr(part, "text", ""))
                if isinstance(part, TextPart) and part.logprobs and state.carrier == "content":
                    state.tokens = len(part.logprobs)
                    return [self._chunk(delta, tokens=part.logprobs)]
        return [self._chunk(delta)] if delta else []

    def _state_for(self, part: Part) -> _Open:
        if isinstance(part, ToolCallPart):
            self._calls += 1
            return _Open(carrier="call", call_index=self._calls - 1)
        if isinstance(part, TextPart):
            return _Open(carrier="content", offset=self._content_length)
        if isinstance(part, RefusalPart):
            return _Open(carrier="refusal")
        if is_listed(part):
            return _Open(carrier="listed")
        if is_executed(part) and (
            self._dialect is None
            or admits("response_message", EXECUTED, [], self._dialect, request=False)
        ):
            return _Open(carrier="executed")
        if in_content(part, self._dialect):
            return _Open(carrier=CARRIER)  # Mistral: reasoning streamed in content
        if isinstance(part, ReasoningPart):
            target = part_dialect(part, self._dialect)
            if target == "openrouter":
                return _Open(carrier="details")
            if target in RAW_CARRIERS and part.reasoning_kind == "raw":
                return _Open(carrier=target)
        return _Open(carrier="hidden")

    def _sign(self, target: JsonObject, part: TextPart | ToolCallPart) -> bool:
        signature = part.signature
        if signature is None or not carries_google(signature, self._dialect):
            return False
        if not isinstance(signature.data, str):
            return False
        put_google_signature(target, signature.data, extra_of(part.extra))
        return True

    def _text_delta(self, state: _Open, part: Part, text: str) -> JsonObject:
        delta: JsonObject = {}
        if text:
            delta.update(self._piece(state, text))
            state.sent.append(text)
            self._content_length += len(text) if state.carrier == "content" else 0
        if isinstance(part, TextPart) and not state.signed:
            state.signed = self._sign(delta, part)
        return delta

    def _detail_start(self, state: _Open, part: ReasoningPart) -> list[SseEvent]:
        detail = own_detail(part) or synthesized_detail(part)
        if detail is None:
            state.carrier = "hidden"
            return []
        kind = detail.get("type")
        field = DETAIL_TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
        state.template = {k: v for k, v in detail.items() if k in ("type", "format", "index")}
        state.text_field = field
        state.sent = [part.text]
        delta: JsonObject = {}
        if part.text:
            delta["reasoning"] = part.text
        delta["reasoning_details"] = [detail]
        return [self._chunk(delta)]

    def _delta(self, index: int, text: str) -> list[SseEvent]:
        state = self._open.get(index)
        if state is None or not text or state.carrier == "hidden":
            return []
        state.sent.append(text)
        self._content_length += len(text) if state.carrier == "content" else 0
        if state.carrier == "call":
            piece = _string(text)
            call = f'{{"index":{state.call_index},"function":{{"arguments":{piece}}}}}'
            return [self._written(f'{{"tool_calls":[{call}]}}')]
        if state.carrier == "details":
            delta: JsonObject = {
                "reasoning": text,
                "reasoning_details": [self._fragment(state, text)],
            }
            return [self._chunk(delta)]
        if state.carrier == CARRIER:
            return [self._chunk(delta_piece(text))]
        return [self._written(f"{{{_string(state.carrier)}:{_string(text)}}}")]

    @staticmethod
    def _piece(state: _Open, text: str) -> JsonObject:
        """A text carrier's delta: its key, or a Mistral ``thinking`` content part."""
        return delta_piece(text) if state.carrier == CARRIER else {state.carrier: text}

    def _fragment(self, state: _Open, text: str) -> JsonObject:
        fragment = dict(state.template or {})
        if state.text_field is not None:
            fragment[state.text_field] = text
        return fragment

    def _finished_part(self, index: int, part: Part) -> list[SseEvent]:
        state = self._open.get(index)
        if state is None or state.carrier == "hidden":
            return []
        if state.carrier == "listed":
            return []  # sent whole when it started
        if isinstance(part, HostedToolPart):  # "executed": the run as it finished
            return [self._chunk({EXECUTED: [part.item]})]
        events: list[SseEvent] = []
        final = part.arguments if isinstance(part, ToolCallPart) else getattr(part, "text", "")
        sent = "".join(state.sent)
        if final.startswith(sent) and len(final) > len(sent) and state.carrier != "details":
            events.extend(self._delta(index, final[len(sent) :]))
        unsent = len(part.logprobs) - state.tokens if isinstance(part, TextPart) else 0
        if isinstance(part, TextPart) and state.carrier == "content" and unsent > 0:
            events.append(self._chunk({}, tokens=part.logprobs[state.tokens :]))
            state.tokens = len(part.logprobs)
        if isinstance(part, TextPart | ToolCallPart) and not state.signed:
            events.extend(self._late_signature(state, part))
        if state.carrier == CARRIER and (fields := extra_of(part.extra)):
            # Mistral's ``closed`` (and any field it adds) closes the streamed thinking part
            events.append(self._chunk({"content": [{"type": CARRIER, "thinking": [], **fields}]}))
        if isinstance(part, TextPart) and part.citations and state.carrier == "content":
            cited = shift_citations(part.citations, state.offset, len(part.text))
            events.append(self._chunk({"annotations": encode_annotations(cited)}))
        return events

    def _listed(self, part: HostedToolPart) -> list[SseEvent]:
        """Groq's discovered MCP tools: a chunk of their own (no choice), top-level
        ``mcp_list_tools`` as in a whole answer, where the client's dialect admits it."""
        listed = groq_fields((part,), None, self._fields)
        if not listed:
            return []
        return [SseEvent(data=f"{self._head}[],{_dumps(listed)[1:]}")]

    def _late_signature(self, state: _Open, part: TextPart | ToolCallPart) -> list[SseEvent]:
        holder: JsonObject = {}
        if not self._sign(holder, part):
            return []
        state.signed = True
        if isinstance(part, ToolCallPart):
            return [self._chunk({"tool_calls": [{"index": state.call_index, **holder}]})]
        return [self._chunk(holder)]
