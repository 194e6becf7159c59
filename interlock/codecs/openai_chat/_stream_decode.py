"""``chat.completion.chunk`` SSE events → transcript updates (a sans-I/O state machine).

Each wire carrier is a *slot* that owns one canonical part index, allocated in order of
first appearance: raw reasoning per key, an OpenRouter detail per detail ``index``, the
text, the refusal, and a tool call per tool-call ``index`` (id and name arrive only on a
call's first delta; provider-wire.md trap 22). Parts finish together when the choice
finishes; a usage-only chunk (empty ``choices``) becomes a usage update; ``[DONE]`` ends
the stream. ``obfuscation`` padding is noise and is dropped (trap 37). Groq's
``delta.executed_tools`` are hosted parts, one per run ``index`` (:mod:`._executed`).

The ``ResponseFinished`` of a finished choice is held until ``[DONE]`` (or the end of
input): usage arrives *after* ``finish_reason`` (``stream_options.include_usage`` sends it in
a last chunk with empty ``choices``; OpenRouter's last chunk repeats the choice with an empty
delta), and every update must reach the client's encoder before the response's end.
An in-band ``{"error": …}`` chunk (OpenRouter, mid-stream) is a stream failure, and the
response's last word: the ``[DONE]`` after it adds nothing. Groq sends
the usage of a stream in ``x_groq.usage`` of its last chunk; it is decoded as the usage (the
Chat encoder writes it back as the standard ``usage``), its ``x_groq.usage_breakdown`` as the
usage's breakdown (written back in the finish chunk's ``x_groq``); a top-level
``mcp_list_tools`` on a chunk is hosted parts (:mod:`._executed`).

Choice 0 is the response, as when not streamed; the deltas of another choice (``n > 1``)
are decoded by a decoder of their own and come out as :class:`CandidateUpdate` values
(its end with the response's). A choice's ``logprobs.content`` tokens go with the text
delta of the same chunk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import cast

from interlock.codecs._failures import failure
from interlock.codecs._json import loads
from interlock.codecs._logprobs import decode_openai_tokens
from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat._citations import citations_of
from interlock.codecs.openai_chat._executed import (
    BREAKDOWN,
    GROQ_END,
    LISTED,
    decode_listed,
    executed_part,
    groq_end_fields,
)
from interlock.codecs.openai_chat._executed import FIELD as EXECUTED
from interlock.codecs.openai_chat._finish import decode_finish_reason
from interlock.codecs.openai_chat._reasoning import (
    DETAIL_TEXT_FIELDS,
    RAW_CARRIERS,
    detail_part,
    take_google_signature,
)
from interlock.codecs.openai_chat._stream_plain import plain_delta
from interlock.codecs.openai_chat._thinking import CARRIER, chunks_text
from interlock.codecs.openai_chat._tools import check_arguments
from interlock.codecs.openai_chat._usage import decode_breakdown, decode_usage
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    as_int,
    as_list,
    as_object,
    as_str,
    optional_str,
    rest,
    with_extra,
)
from interlock.transcript import (
    CandidateUpdate,
    DecodeError,
    HostedToolPart,
    JsonObject,
    JsonValue,
    ModelUsage,
    Opaque,
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
from interlock.transcript.build import part_delta

_CHUNK_KEYS = {"id", "object", "created", "model", "choices", "usage", "obfuscation"}
_CONCATENATED = ("text", "summary", "data")


@dataclass(slots=True)
class _Slot:
    """One canonical part being assembled."""

    index: int
    part: Part
    pieces: list[str] = field(default_factory=list[str])
    detail: JsonObject | None = None
    path: str = ""
    logprobs: list[TokenLogprob] = field(default_factory=list[TokenLogprob])


class StreamDecoder:
    """Feed Chat SSE events, get transcript updates; :meth:`finish` at end of input."""

    def __init__(self) -> None:
        self._slots: dict[tuple[str, int | str], _Slot] = {}
        self._ended: set[int] = set()  # slots already finished before the response's end
        self._started = False
        self._finished = False
        self._done = False
        self._chunks = 0
        self._signature: Opaque | None = None
        self._ending: ResponseFinished | None = None
        self._groq_end: JsonObject = {}
        """Groq's last-chunk ``x_groq`` fields not decoded (a ``usage_breakdown`` of another
        shape than documented, or without a usage)."""
        self._failed = False
        self._usage: Usage | None = None
        """The last usage decoded."""
        self._breakdown: tuple[tuple[ModelUsage, ...], JsonValue] | None = None
        """Groq's usage breakdown (decoded, and as sent: kept there if no usage comes)."""
        self._prelude: JsonObject = {}
        self._annotations: list[JsonValue] = []
        """``annotations`` deltas (URL citations of the streamed text)."""
        self._detail_keys: dict[int | str, tuple[str, int | str]] = {}
        """The slot of the detail open at each ``reasoning_details`` index."""
        self._others: dict[int, StreamDecoder] = {}
        """The decoder of each other choice (``n > 1``), by choice index."""
        """Fields of an id-less, choice-less first chunk (Azure's ``prompt_filter_results``)."""

    def feed(self, event: SseEvent) -> list[Update]:
        """The updates one event yields (raises :class:`DecodeError` on malformed input)."""
        if self._done:
            raise DecodeError("stream", "event after data: [DONE]")
        data = event.data
        if "[DONE]" in data and data.strip() == "[DONE]":  # no copy of every chunk's text
            self._done = True
            if self._failed:
                return []  # the in-band error ended the response: nothing follows it
            return self._end() if self._finished else self._finish_parts(None) + self._end()
        number = self._chunks
        self._chunks += 1
        try:
            chunk = loads(data)
        except ValueError as error:
            raise DecodeError(f"stream[{number}]", f"malformed JSON in event: {error}") from None
        if self._started and not self._finished:
            plain = plain_delta(chunk)
            # a plain chunk's piece for a part already open (else the general path)
            if plain is not None and (slot := self._slots.get(plain[0])) is not None:
                slot.pieces.append(plain[1])
                return [part_delta(slot.index, plain[1])]
        path = f"stream[{number}]"
        chunk = as_object(chunk, path)
        if chunk.get("error") is not None:
            self._failed = True  # reported once: the end of input adds nothing
            return [_failure(chunk["error"], f"{path}.error")]
        updates: list[Update] = []
        chunk, listed = _take_listed(chunk)
        if not self._started and not self._start(chunk, path, updates):
            return updates
        for part in listed:
            self._open((LISTED, len(self._slots)), part, updates)
        for i, choice in enumerate(as_list(chunk.get("choices", []), f"{path}.choices")):
            updates.extend(
                self._choice(as_object(choice, f"{path}.choices[{i}]"), f"{path}.choices[{i}]")
            )
        self._chunk_end(chunk, path, updates)
        return updates

    def _start(self, chunk: JsonObject, path: str, updates: list[Update]) -> bool:
        """Start the response at its first chunk (``False``: not yet, the chunk was a
        prelude). Azure opens with a chunk of prompt filter results whose id and model are
        empty; the response starts (with its real id) at the next chunk."""
        if not chunk.get("id") and not chunk.get("choices") and chunk.get("usage") is None:
            self._prelude.update(rest(chunk, _CHUNK_KEYS))
            return False
        self._started = True
        updates.append(_started(chunk, path, self._prelude))
        return True

    def _chunk_end(self, chunk: JsonObject, path: str, updates: list[Update]) -> None:
        """The chunk's usage, Groq's per-model breakdown in its ``x_groq`` (on every usage,
        whichever comes first: the usage said again when it came before), and Groq's other
        vendor fields there."""
        usage = _usage_of(chunk, path)
        if isinstance(groq := chunk.get("x_groq"), dict):
            end = groq_end_fields(groq)
            breakdown = decode_breakdown(end.get(BREAKDOWN), f"{path}.x_groq.{BREAKDOWN}")
            if breakdown is not None:
                self._breakdown = (breakdown, end.pop(BREAKDOWN))
                if usage is None and self._usage is not None:
                    usage = UsageUpdate(usage=self._usage)
            self._groq_end.update(end)
        if usage is not None:
            if self._breakdown is not None:
                usage = UsageUpdate(usage=replace(usage.usage, breakdown=self._breakdown[0]))
            self._usage = usage.usage
            updates.append(usage)

    def finish(self) -> list[Update]:
        """End of input: a stream that never finished is reported as failed."""
        if self._finished:
            return self._end()
        if self._failed:
            return []
        if not self._started:
            return [StreamFailed(code="empty_stream", message="the stream ended with no chunk")]
        return [
            StreamFailed(
                code="incomplete_stream",
                message="the stream ended before a finish_reason or [DONE]",
            )
        ]

    def _choice(self, choice: JsonObject, path: str) -> list[Update]:
        index = as_int(choice.get("index", 0), f"{path}.index")
        if index < 0:
            raise DecodeError(f"{path}.index", "a choice index is at least 0")
        if index > 0:
            return self._other_choice(index, choice, path)
        if self._finished:
            self._after_finish(choice, path)
            return []
        updates: list[Update] = []
        delta = choice.get("delta")
        if delta is not None:
            self._delta(as_object(delta, f"{path}.delta"), f"{path}.delta", updates)
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict) and logprobs.get("content"):
            tokens = decode_openai_tokens(logprobs["content"], f"{path}.logprobs.content")
            self._text_logprobs(tokens, updates)
        native = optional_str(choice, "finish_reason", path)
        if native is not None:
            updates.extend(self._finish_parts(native))
        return updates

    def _other_choice(self, index: int, choice: JsonObject, path: str) -> list[Update]:
        """A delta of choice ``index`` (``> 0``), decoded by that choice's own decoder."""
        other = self._others.get(index)
        if other is None:
            other = self._others[index] = StreamDecoder()
            other._started = True
        if other._finished:
            other._after_finish(choice, path)
            return []
        return _as_candidate(index, other._choice({**choice, "index": 0}, path))

    def _text_logprobs(self, tokens: tuple[TokenLogprob, ...], updates: list[Update]) -> None:
        """Put a chunk's content tokens on the text delta it carried (or a delta of no text)."""
        slot = self._slots.get(("text", 0))
        if slot is None:
            slot = self._open(("text", 0), TextPart(text="", signature=self._signature), updates)
        slot.logprobs.extend(tokens)
        for position in range(len(updates) - 1, -1, -1):
            update = updates[position]
            if isinstance(update, PartDelta) and update.index == slot.index:
                updates[position] = replace(update, logprobs=tokens)
                return
            if isinstance(update, PartStarted) and update.index == slot.index:
                updates[position] = replace(update, part=replace(slot.part, logprobs=tokens))
                return
        updates.append(PartDelta(index=slot.index, delta="", logprobs=tokens))

    def _delta(self, delta: JsonObject, path: str, updates: list[Update]) -> None:
        signature, delta = take_google_signature(delta, path)
        if signature is not None:
            self._signature = signature
        details = delta.get("reasoning_details")
        if details is not None:
            listed: set[int | str] = set()
            for i, item in enumerate(as_list(details, f"{path}.reasoning_details")):
                fragment = as_object(item, f"{path}.reasoning_details[{i}]")
                self._detail(fragment, listed, updates)
        for key in RAW_CARRIERS:
            value = delta.get(key)
            if value is None or (key == "reasoning" and details is not None):
                continue
            self._text(("raw", key), as_str(value, f"{path}.{key}"), updates)
        if isinstance(content := delta.get("content"), list):
            self._content_list(cast("list[JsonValue]", content), f"{path}.content", updates)
        elif content is not None:
            self._text(("text", 0), as_str(content, f"{path}.content"), updates)
        if isinstance(annotations := delta.get("annotations"), list):
            self._annotations.extend(cast("list[JsonValue]", annotations))
        if (refusal := delta.get("refusal")) is not None:
            self._text(("refusal", 0), as_str(refusal, f"{path}.refusal"), updates)
        self._calls(delta, path, updates)

    def _calls(self, delta: JsonObject, path: str, updates: list[Update]) -> None:
        """The delta's tool calls, then Groq's executed (server-side) tools."""
        if (calls := delta.get("tool_calls")) is not None:
            for i, call in enumerate(as_list(calls, f"{path}.tool_calls")):
                where = f"{path}.tool_calls[{i}]"
                self._call(as_object(call, where), where, updates)
        if executed := delta.get(EXECUTED):
            for i, entry in enumerate(as_list(executed, f"{path}.{EXECUTED}")):
                self._executed(as_object(entry, f"{path}.{EXECUTED}[{i}]"), i, updates)

    def _executed(self, entry: JsonObject, position: int, updates: list[Update]) -> None:
        """A Groq executed tool: a hosted part per ``index``; a later delta of the same
        index (the run's output after its arguments) completes its object."""
        index = entry.get("index", position)
        key = ("executed", index if isinstance(index, int | str) else position)
        slot = self._slots.get(key)
        if slot is None:
            self._open(key, executed_part(entry), updates)
        elif isinstance(slot.part, HostedToolPart):
            slot.part = executed_part({**slot.part.item, **entry})

    def _content_list(self, content: list[JsonValue], path: str, updates: list[Update]) -> None:
        """Content streamed as parts (Mistral): text, and ``thinking`` as raw reasoning."""
        for i, value in enumerate(content):
            where = f"{path}[{i}]"
            item = as_object(value, where)
            kind = item.get("type")
            if kind == "text":
                self._text(("text", 0), as_str(item.get("text"), f"{where}.text"), updates)
            elif kind == CARRIER:
                text, _ = chunks_text(as_list(item.get("thinking"), f"{where}.thinking"), where)
                self._text(("raw", CARRIER), text, updates)
                self._thinking_fields(rest(item, {"type", "thinking"}))
            else:
                raise DecodeError(f"{where}.type", f"content part type {kind!r} is not streamed")

    def _thinking_fields(self, fields: JsonObject) -> None:
        """Fields of a streamed ``thinking`` part besides its chunks (``closed``) go on the
        open thinking part, as a non-streamed part keeps them."""
        slot = self._slots.get(("raw", CARRIER))
        if not fields or slot is None or not isinstance(slot.part, ReasoningPart):
            return
        part = slot.part
        extra = {**part.extra, DIALECT: {**part.extra.get(DIALECT, {}), **fields}}
        slot.part = ReasoningPart(reasoning_kind=part.reasoning_kind, text=part.text, extra=extra)

    def _open(self, key: tuple[str, int | str], part: Part, updates: list[Update]) -> _Slot:
        if key[0] != "raw":
            self._end_raw_reasoning(updates)
        slot = _Slot(index=len(self._slots) + len(self._ended), part=part)
        self._slots[key] = slot
        updates.append(PartStarted(index=slot.index, part=part))
        return slot

    def _end_raw_reasoning(self, updates: list[Update]) -> None:
        """Raw reasoning (``reasoning_content``) is over once the answer or a call starts:
        finish it then, so consumers see reasoning end before the answer begins (AG-UI's
        reasoning span closes when text starts). Reasoning that resumes later is a new part."""
        for key in [key for key in self._slots if key[0] == "raw"]:
            slot = self._slots.pop(key)
            self._ended.add(slot.index)
            updates.append(PartFinished(index=slot.index, part=self._final(slot)))

    def _text(self, key: tuple[str, int | str], text: str, updates: list[Update]) -> None:
        slot = self._slots.get(key)
        if slot is None:
            if not text:
                return  # the role chunk's "content": "" opens nothing
            self._open(key, self._first_part(key, text), updates).pieces.append(text)
        elif text:
            slot.pieces.append(text)
            updates.append(PartDelta(index=slot.index, delta=text))

    def _first_part(self, key: tuple[str, int | str], text: str) -> Part:
        kind, name = key
        if kind == "text":
            return TextPart(text=text, signature=self._signature)
        if kind == "refusal":
            return RefusalPart(text=text)
        carrier = with_extra({}, {"carrier": name})
        return ReasoningPart(reasoning_kind="raw", text=text, extra=carrier)

    def _detail(self, fragment: JsonObject, listed: set[int | str], updates: list[Update]) -> None:
        """One ``reasoning_details`` entry: the next fragment of the detail open at its
        ``index``, or a new detail. OpenRouter re-streams several details under one index
        (Gemini's text then its encrypted signature; two entries in one delta): a fragment
        of another type, id or format, or listed twice in one delta, starts a new one."""
        index = fragment.get("index")
        position = index if isinstance(index, int) else f"n{len(self._slots) + len(self._ended)}"
        key = self._detail_keys.get(position)
        slot = self._slots.get(key) if key is not None else None
        if slot is None or position in listed or not _continues(slot.detail or {}, fragment):
            fresh = f"{position}/{len(self._slots) + len(self._ended)}"
            key = ("detail", position if key is None else fresh)
            self._detail_keys[position] = key
            listed.add(position)
            self._open(key, detail_part(fragment), updates).detail = dict(fragment)
            return
        listed.add(position)
        merged = slot.detail if slot.detail is not None else {}
        for name, value in fragment.items():
            previous = merged.get(name)
            if name in _CONCATENATED and isinstance(previous, str) and isinstance(value, str):
                merged[name] = previous + value
            else:
                merged[name] = value
        slot.detail = merged
        kind = merged.get("type")
        text_field = DETAIL_TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
        piece = fragment.get(text_field) if text_field else None
        if isinstance(piece, str) and piece:
            updates.append(PartDelta(index=slot.index, delta=piece))

    def _call(self, call: JsonObject, path: str, updates: list[Update]) -> None:
        signature, call = take_google_signature(call, path)
        position = as_int(call.get("index", 0), f"{path}.index")
        kind = "custom" if call.get("type") == "custom" or "custom" in call else "function"
        inner = as_object(call.get(kind) or {}, f"{path}.{kind}")
        field_name = "input" if kind == "custom" else "arguments"
        piece = inner.get(field_name)
        piece = "" if piece is None else as_str(piece, f"{path}.{kind}.{field_name}")
        slot = self._slots.get(("call", position))
        if slot is None:
            call_id = as_str(call.get("id"), f"{path}.id")
            name = as_str(inner.get("name"), f"{path}.{kind}.name")
            unknown = rest(call, {"index", "id", "type", kind})
            layout: JsonObject = {"type": "custom"} if kind == "custom" else {}
            part = ToolCallPart(
                call_id=call_id,
                name=name,
                arguments=piece,
                signature=signature,
                extra=with_extra(unknown, layout),
            )
            slot = self._open(("call", position), part, updates)
            slot.pieces.append(piece)
            slot.path = f"{path}.{kind}.{field_name}"
            return
        if signature is not None and isinstance(slot.part, ToolCallPart):
            slot.part = ToolCallPart(
                call_id=slot.part.call_id,
                name=slot.part.name,
                arguments=slot.part.arguments,
                signature=signature,
                extra=slot.part.extra,
            )
        if piece:
            slot.pieces.append(piece)
            updates.append(PartDelta(index=slot.index, delta=piece))

    def _finish_parts(self, native: str | None) -> list[Update]:
        self._finished = True
        updates: list[Update] = []
        if self._signature is not None and ("text", 0) not in self._slots:
            carrier = TextPart(
                text="", signature=self._signature, extra=with_extra({}, {"carrier": True})
            )
            self._open(("text", 0), carrier, updates)
        for slot in sorted(self._slots.values(), key=lambda s: s.index):
            updates.append(PartFinished(index=slot.index, part=self._final(slot)))
        self._ending = ResponseFinished(
            finish_reason=None if native is None else decode_finish_reason(native),
            native_finish_reason=native,
        )
        return updates

    def _end(self) -> list[Update]:
        """The held ``ResponseFinished`` (once), after the other choices' ends."""
        updates: list[Update] = []
        for index in sorted(self._others):
            other = self._others[index]
            steps = [] if other._finished else other._finish_parts(None)
            updates.extend(_as_candidate(index, steps + other._end()))
        ending, self._ending = self._ending, None
        if self._breakdown is not None and self._usage is None:
            self._groq_end[BREAKDOWN] = self._breakdown[1]  # no usage to hold it
        if ending is not None and self._groq_end:
            ending = replace(ending, extra={GROQ_END: self._groq_end})
        return updates + ([ending] if ending is not None else [])

    def _after_finish(self, choice: JsonObject, path: str) -> None:
        """A choice repeated after its finish_reason may carry nothing new (OpenRouter's
        usage chunk: an empty delta, the same or no finish_reason); content is refused."""
        delta = as_object(choice.get("delta") or {}, f"{path}.delta")
        carried = {key: value for key, value in delta.items() if value not in (None, "", [])}
        carried.pop("role", None)
        native = choice.get("finish_reason")
        held = self._ending.native_finish_reason if self._ending else None
        if carried or (native is not None and native != held):
            raise DecodeError(path, "choice delta after its finish_reason")

    def _final(self, slot: _Slot) -> Part:
        if slot.detail is not None:
            return detail_part(slot.detail)
        part = slot.part
        text = "".join(slot.pieces)
        if isinstance(part, ToolCallPart):
            if part.extra.get(LAYOUT, {}).get("type") != "custom":
                check_arguments(text, slot.path)
            return ToolCallPart(
                call_id=part.call_id,
                name=part.name,
                arguments=text,
                signature=part.signature,
                extra=part.extra,
            )
        if isinstance(part, TextPart):
            citations = citations_of(self._annotations) or ()
            return TextPart(
                text=text,
                signature=self._signature,
                citations=citations,
                logprobs=tuple(slot.logprobs),
                extra=part.extra,
            )
        if isinstance(part, HostedToolPart):
            return part
        return _with_text(part, text)


def _with_text(part: Part, text: str) -> Part:
    if isinstance(part, TextPart):
        return TextPart(text=text, signature=part.signature, extra=part.extra)
    if isinstance(part, RefusalPart):
        return RefusalPart(text=text, extra=part.extra)
    if isinstance(part, ReasoningPart):
        return ReasoningPart(reasoning_kind=part.reasoning_kind, text=text, extra=part.extra)
    raise AssertionError(f"no text on a {part.kind} part")


def _as_candidate(index: int, updates: list[Update]) -> list[Update]:
    """Another choice's updates, as updates of candidate ``index``."""
    return [
        CandidateUpdate(candidate=index, update=update)
        for update in updates
        if isinstance(update, PartStarted | PartDelta | PartFinished | ResponseFinished)
    ]


def _continues(detail: JsonObject, fragment: JsonObject) -> bool:
    """True when ``fragment`` can be the next piece of ``detail`` (same type, id, format)."""
    for name in ("type", "id", "format"):
        value = fragment.get(name)
        if value is not None and detail.get(name) is not None and value != detail[name]:
            return False
    return True


def _take_listed(chunk: JsonObject) -> tuple[JsonObject, list[HostedToolPart]]:
    """The chunk without Groq's discovered MCP tools, and their hosted parts (none when it
    holds none, or not as a list of objects: then it stays a field)."""
    listed = decode_listed(chunk.get(LISTED))
    if listed is None:
        return chunk, []
    return {key: value for key, value in chunk.items() if key != LISTED}, listed


def _started(chunk: JsonObject, path: str, prelude: JsonObject) -> ResponseStarted:
    created = chunk.get("created")
    unknown = {**prelude, **rest(chunk, _CHUNK_KEYS)}
    return ResponseStarted(
        id=optional_str(chunk, "id", path),
        model=optional_str(chunk, "model", path),
        created=None if created is None else as_int(created, f"{path}.created"),
        extra={DIALECT: unknown} if unknown else {},
    )


def _usage_of(chunk: JsonObject, path: str) -> UsageUpdate | None:
    """The chunk's usage: the standard ``usage``, else Groq's ``x_groq.usage`` (Groq's last
    chunk carries the usage only there, beside the finish_reason)."""
    if chunk.get("usage") is not None:
        return UsageUpdate(usage=decode_usage(chunk["usage"], f"{path}.usage"))
    groq = chunk.get("x_groq")
    if isinstance(groq, dict) and groq.get("usage") is not None:
        return UsageUpdate(usage=decode_usage(groq["usage"], f"{path}.x_groq.usage"))
    return None


def _failure(value: JsonValue, path: str) -> StreamFailed:
    error = as_object(value, path)
    code = error.get("code")
    message = error.get("message")
    named = code is not None and code != ""
    return failure(
        code if named else error.get("type"),
        message if isinstance(message, str) else json.dumps(error),
        error.get("status"),
        implies=named,  # an error ``type`` alone (``server_error``) could be anything
    )
