"""``streamGenerateContent?alt=sse`` ⇄ canonical stream updates (sans-I/O).

Each SSE ``data:`` holds a whole ``GenerateContentResponse`` with only the *new* parts
(provider-wire.md §3.5). Chunk boundaries are not part boundaries:

* consecutive unsigned text fragments (or unsigned thought fragments) are one logical part:
  the first starts it, the next ones are :class:`PartDelta`;
* a fragment carrying a ``thoughtSignature`` is never merged: it becomes its own part, and
  text after it starts a new part (traps 6/7); the signature-only empty part at the end of a
  stream becomes an ``encrypted`` :class:`ReasoningPart`;
* a ``functionCall`` arrives whole; parallel calls come in separate chunks without index,
  each becomes its own part in arrival order (trap 22);
* ``usageMetadata`` may come on many chunks: every one is a :class:`UsageUpdate` (the last
  wins); the chunk with ``finishReason`` ends the response. There is no ``[DONE]``.
* ``groundingMetadata`` (the last one seen) and ``citationMetadata`` (every source seen)
  become the text parts' citations when the response finishes (:mod:`._citations`, offsets
  counted in the streamed text). Grounding comes at the end, so the open text run stays open
  across the trailing signature-only part and finishes with its citations; a citation of a
  text part that was already finished (one ended by a signed fragment after it) cannot be
  attached in a stream and is carried only in the candidate's Gemini fields.

The encoder (:mod:`._stream_encode`) writes the same shape: text deltas as they come, a signed text part's
signature on a trailing empty-text part when its text already went out, whole calls, and a
final chunk with ``finishReason``, ``usageMetadata`` and the citations of the text parts as
``groundingMetadata`` (unless the candidate's own fields carry it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from interlock.codecs._failures import failure
from interlock.codecs._json import loads
from interlock.codecs._sse import SseEvent
from interlock.codecs.gemini._citations import (
    CITATION,
    GROUNDING,
    with_citations,
)
from interlock.codecs.gemini._finish import decode_finish, prompt_block
from interlock.codecs.gemini._logprobs import AVERAGE, RESULT, decode_logprobs
from interlock.codecs.gemini._partial import (
    StreamedCall,
    continue_call,
    start_call,
    streamed_fragment,
)
from interlock.codecs.gemini._parts import decode_part
from interlock.codecs.gemini._response import CANDIDATE_FIELDS, RESPONSE_FIELDS, minted_call_id
from interlock.codecs.gemini._usage import decode_usage
from interlock.codecs.gemini._wire import (
    DIALECT,
    as_list,
    as_object,
    as_str,
    camel,
    is_signature,
    split_fields,
)
from interlock.codecs.gemini._wire import field as wire_field
from interlock.transcript import (
    CandidateUpdate,
    Citation,
    DecodeError,
    JsonObject,
    JsonValue,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    TokenLogprob,
    Update,
    UsageUpdate,
)

_ORIGIN: JsonObject = {}
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_CHUNK_HEAD = '{"candidates":[{"content":{"role":"model","parts":['
_CHUNK_MIDDLE = ']},"index":0}]'
_PLAIN_CANDIDATE = frozenset({"content", "finishReason", "index"})
_PER_CHUNK = frozenset({RESULT, AVERAGE})
"""Candidate fields about one chunk's tokens: carried by the text's log-probabilities."""


def _index_of(candidate: JsonValue) -> int:
    index = candidate.get("index", 0) if isinstance(candidate, dict) else 0
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


@dataclass(slots=True)
class _OpenRun:
    """An unsigned text or thought run still receiving fragments."""

    index: int
    thought: bool
    fragments: list[str] = field(default_factory=list[str])
    held: bool = False
    """A text run kept open across a signature-only part: nothing more is appended to it."""
    citations: tuple[Citation, ...] = ()
    logprobs: list[TokenLogprob] = field(default_factory=list[TokenLogprob])

    def part(self) -> Part:
        text = "".join(self.fragments)
        if self.thought:
            return ReasoningPart(reasoning_kind="summary", text=text, extra={DIALECT: _ORIGIN})
        return TextPart(text=text, citations=self.citations, logprobs=tuple(self.logprobs))


def _signature_only(part: Part) -> bool:
    """The empty signed part at the end of a Gemini 3 answer."""
    return (
        isinstance(part, ReasoningPart)
        and part.reasoning_kind == "encrypted"
        and not part.text
        and is_signature(part.opaque)
    )


def _run_kind(part: Part) -> bool | None:
    """``False`` for mergeable plain text, ``True`` for a mergeable thought, else ``None``."""
    if isinstance(part, TextPart):
        return False if part.signature is None and not part.extra else None
    if isinstance(part, ReasoningPart) and part.reasoning_kind == "summary":
        own = part.extra.get(DIALECT)
        return True if part.opaque is None and not own else None
    return None


class StreamDecoder:
    """Gemini SSE events → canonical updates. Raises :class:`DecodeError` on malformed input."""

    __slots__ = (
        "_after_streamed_call",
        "_calls",
        "_fields",
        "_finished",
        "_grounding",
        "_next_index",
        "_open",
        "_others",
        "_own",
        "_parts",
        "_recited",
        "_response_id",
        "_started",
        "_streamed",
    )

    def __init__(self) -> None:
        self._started = False
        self._finished = False
        self._next_index = 0
        self._open: _OpenRun | None = None
        self._calls = 0
        self._response_id: str | None = None
        self._fields: JsonObject = {}
        self._streamed: StreamedCall | None = None
        self._after_streamed_call = False
        self._parts: dict[int, Part] = {}
        self._grounding: JsonValue = None
        self._recited: list[JsonValue] = []
        self._others: dict[int, StreamDecoder] = {}
        self._own = 0
        """The index of the candidate this decoder decodes (another's decoder has its own)."""

    def feed(self, event: SseEvent) -> list[Update]:
        """Consume one SSE event (one response chunk)."""
        if not event.data.strip():
            return []
        if self._finished:
            raise DecodeError("", "stream data after the chunk that carried finishReason")
        try:
            payload = loads(event.data)
        except ValueError as error:
            raise DecodeError("data", f"malformed JSON in stream chunk: {error}") from error
        return self.feed_chunk(as_object(payload, "data"))

    def feed_chunk(self, chunk: JsonObject) -> list[Update]:
        """Consume one already-parsed chunk (the JSON-array form of the stream)."""
        updates: list[Update] = []
        if "error" in chunk:
            return self._failed(chunk, updates)
        fields: dict[str, JsonValue] = chunk
        if not chunk.keys() <= RESPONSE_FIELDS:
            fields, unknown = split_fields(chunk, RESPONSE_FIELDS)
            self._fields.update(unknown)
        if not self._started:
            self._start(fields, updates)
        raw: JsonObject = {}
        candidate: dict[str, JsonValue] = raw
        candidates = as_list(fields.get("candidates", []), "candidates")
        if len(candidates) > 1 or (candidates and _index_of(candidates[0]) != self._own):
            candidates = self._other_candidates(candidates, updates)
        if candidates:
            raw = candidate = as_object(candidates[0], "candidates[0]")
            if not raw.keys() <= _PLAIN_CANDIDATE:
                candidate, unknown = split_fields(raw, CANDIDATE_FIELDS)
                self._remember_citations(unknown)
                if "content" in candidate:
                    self._content(candidate["content"], updates)
                self._chunk_logprobs(unknown, updates)
            elif "content" in candidate:
                self._content(candidate["content"], updates)
        if "usageMetadata" in fields:
            usage = decode_usage(fields["usageMetadata"], "usageMetadata")
            updates.append(UsageUpdate(usage=usage))
        if "finishReason" in candidate:
            self._finish(candidate["finishReason"], raw, updates)
        elif (blocked := prompt_block(chunk)) is not None:
            self._finish(blocked, {}, updates, blocked=True)
        return updates

    def _other_candidates(
        self, candidates: list[JsonValue], updates: list[Update]
    ) -> list[JsonValue]:
        """Feed every candidate but the first (``index > 0``) to its own decoder; their
        updates come out as :class:`CandidateUpdate` values. Returns the first's list."""
        first: list[JsonValue] = []
        for position, value in enumerate(candidates):
            index = _index_of(value)
            if index == self._own:
                first = [value]
                continue
            other = self._others.get(index)
            if other is None or self._own:
                if self._own:
                    raise DecodeError(f"candidates[{position}]", "a candidate of another index")
                other = self._others[index] = StreamDecoder()
                other._started, other._own = True, index
                other._response_id = self._response_id
            if other._finished:
                raise DecodeError(
                    f"candidates[{position}]", "candidate data after its finishReason"
                )
            steps = other.feed_chunk({"candidates": [value]})
            updates.extend(
                CandidateUpdate(candidate=index, update=step)
                for step in steps
                if isinstance(step, PartStarted | PartDelta | PartFinished | ResponseFinished)
            )
        return first

    def _chunk_logprobs(self, unknown: JsonObject, updates: list[Update]) -> None:
        """A chunk's ``logprobsResult``: the tokens of the text it carried, on the open text
        run and its update in this chunk."""
        tokens = decode_logprobs(unknown, "candidates[0]")
        run = self._open
        if not tokens or run is None or run.thought:
            return
        run.logprobs.extend(tokens)
        for position in range(len(updates) - 1, -1, -1):
            update = updates[position]
            if isinstance(update, PartDelta) and update.index == run.index:
                updates[position] = PartDelta(index=run.index, delta=update.delta, logprobs=tokens)
                return
            if isinstance(update, PartStarted) and update.index == run.index:
                updates[position] = PartStarted(index=run.index, part=run.part())
                return
        updates.append(PartDelta(index=run.index, delta="", logprobs=tokens))

    def _remember_citations(self, unknown: JsonObject) -> None:
        """Keep the last grounding metadata and every recited source seen so far."""
        if GROUNDING in unknown:
            self._grounding = unknown[GROUNDING]
        recited = unknown.get(CITATION)
        if isinstance(recited, dict):
            sources = wire_field(recited, "citationSources") or wire_field(recited, "citations")
            if isinstance(sources, list):
                self._recited += sources

    def _cited_run(self, kept: JsonObject) -> None:
        """Attach the citations seen to the open text run (module docstring); the candidate
        fields of the finish keep metadata that came on earlier chunks."""
        if self._grounding is None and not self._recited:
            return
        if GROUNDING not in kept and self._grounding is not None:
            kept[GROUNDING] = self._grounding
        if CITATION not in kept and self._recited:
            kept[CITATION] = {"citationSources": self._recited}
        run = self._open
        if run is None or run.thought:
            return
        parts = dict(self._parts)
        parts[run.index] = run.part()
        ordered = [parts[index] for index in sorted(parts)]
        recited: JsonObject = {"citationSources": self._recited}
        metadata: JsonObject = {GROUNDING: self._grounding, CITATION: recited}
        cited = with_citations(ordered, metadata)
        position = sorted(parts).index(run.index)
        part = cited[position]
        if isinstance(part, TextPart):
            run.citations = part.citations

    def _start(self, fields: dict[str, JsonValue], updates: list[Update]) -> None:
        self._started = True
        response_id = fields.get("responseId")
        model = fields.get("modelVersion")
        self._response_id = None if response_id is None else as_str(response_id, "responseId")
        updates.append(
            ResponseStarted(
                id=self._response_id,
                model=None if model is None else as_str(model, "modelVersion"),
            )
        )

    def _finish(
        self, reason: JsonValue, raw: JsonObject, updates: list[Update], *, blocked: bool = False
    ) -> None:
        native = as_str(reason, "candidates[0].finishReason")
        kept: JsonObject = {
            camel(key): item
            for key, item in raw.items()
            if camel(key) not in CANDIDATE_FIELDS and camel(key) not in _PER_CHUNK
        }
        self._cited_run(kept)
        self._close(updates)
        self._finished = True
        marks: JsonObject = {"candidate": kept}
        if self._fields:
            marks["fields"] = self._fields
        updates.append(
            ResponseFinished(
                finish_reason="content_filter"
                if blocked
                else decode_finish(native, self._calls > 0),
                native_finish_reason=native,
                extra={DIALECT: marks},
            )
        )

    def finish(self) -> list[Update]:
        """The stream ended; a stream cut before ``finishReason`` is reported as failed."""
        if self._finished:
            return []
        updates: list[Update] = []
        self._close(updates)
        self._finished = True
        updates.append(
            StreamFailed(code="incomplete_stream", message="the stream ended without finishReason")
        )
        return updates

    def _failed(self, chunk: JsonObject, updates: list[Update]) -> list[Update]:
        error = as_object(chunk["error"], "error")
        status = error.get("code")
        self._close(updates)
        self._finished = True
        updates.append(
            failure(error.get("status") or "UNKNOWN", str(error.get("message") or ""), status)
        )
        return updates

    def _content(self, value: JsonValue, updates: list[Update]) -> None:
        parts = wire_field(as_object(value, "candidates[0].content"), "parts")
        if parts is None:
            return
        for position, item in enumerate(as_list(parts, "candidates[0].content.parts")):
            if isinstance(item, dict) and self._plain_fragment(item, updates):
                continue
            path = f"candidates[0].content.parts[{position}]"
            if isinstance(item, dict) and self._call_fragment(item, path, updates):
                continue
            self._end_streamed_call(updates)
            part = decode_part(item, path, minted_call_id(self._response_id, self._calls))
            if part.kind == "tool_call":
                self._calls += 1
            self._part(part, updates)

    def _call_fragment(self, item: JsonObject, path: str, updates: list[Update]) -> bool:
        """A fragment of a call whose arguments stream (Vertex ``partialArgs``): the first
        opens the call, the last closes it; an empty one after the close carries nothing."""
        call = wire_field(item, "functionCall")
        if not isinstance(call, dict):
            return False
        opened = self._streamed
        named = wire_field(call, "name") is not None
        if opened is None:
            if named and streamed_fragment(call):
                self._open_streamed_call(item, path, updates)
                return True
            # The empty functionCall that follows a streamed call's end carries nothing.
            return not named and self._after_streamed_call and not call
        if named:  # a new call: the open one was never closed
            self._end_streamed_call(updates)
            return self._call_fragment(item, path, updates)
        continue_call(opened, item, path)
        if opened.done:
            self._end_streamed_call(updates)
        return True

    def _open_streamed_call(self, item: JsonObject, path: str, updates: list[Update]) -> None:
        self._close(updates)
        index = self._next_index
        self._next_index += 1
        minted = minted_call_id(self._response_id, self._calls)
        self._calls += 1
        opened = start_call(item, index, minted, path)
        updates.append(PartStarted(index=index, part=opened.part(opening=True)))
        self._streamed = opened
        if opened.done:
            self._end_streamed_call(updates)

    def _end_streamed_call(self, updates: list[Update]) -> None:
        opened, self._streamed = self._streamed, None
        self._after_streamed_call = opened is not None
        if opened is not None:
            self._done(opened.index, opened.part(), updates)

    def _plain_fragment(self, item: JsonObject, updates: list[Update]) -> bool:
        """Fast path for the common chunk: an unsigned text or thought fragment, nothing else."""
        text = item.get("text")
        if not isinstance(text, str) or len(item) > 2:
            return False
        if len(item) == 2:
            if item.get("thought") is not True:
                return False
            thought = True
        else:
            thought = False
        run = self._open
        if run is not None and run.thought == thought and not run.held:
            if text:
                run.fragments.append(text)
                updates.append(PartDelta(index=run.index, delta=text))
            return True
        if not text:
            return True
        self._close(updates)
        index = self._next_index
        self._next_index += 1
        self._open = _OpenRun(index=index, thought=thought, fragments=[text])
        updates.append(PartStarted(index=index, part=self._open.part()))
        return True

    def _part(self, part: Part, updates: list[Update]) -> None:
        kind = _run_kind(part)
        text = part.text if isinstance(part, TextPart | ReasoningPart) else ""
        run = self._open
        if kind is not None and run is not None and run.thought == kind and not run.held:
            if text:
                run.fragments.append(text)
                updates.append(PartDelta(index=run.index, delta=text))
            return
        if kind is not None and not text:
            return  # an empty unsigned fragment carries nothing
        if run is not None and not run.thought and not run.held and _signature_only(part):
            run.held = True  # grounding for the run may still come (module docstring)
        else:
            self._close(updates)
        index = self._next_index
        self._next_index += 1
        updates.append(PartStarted(index=index, part=part))
        if kind is not None:
            self._open = _OpenRun(index=index, thought=kind, fragments=[text])
        else:
            self._done(index, part, updates)

    def _done(self, index: int, part: Part, updates: list[Update]) -> None:
        self._parts[index] = part
        updates.append(PartFinished(index=index, part=part))

    def _close(self, updates: list[Update]) -> None:
        self._end_streamed_call(updates)
        run = self._open
        if run is not None:
            self._open = None
            self._done(run.index, run.part(), updates)
