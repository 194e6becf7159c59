"""Canonical updates → ``streamGenerateContent?alt=sse`` chunks (the shape
:mod:`._stream` decodes).

Text deltas go out as they come (with the ``logprobsResult`` of their tokens), a signed
text part's signature on a trailing empty-text part when its text already went out, whole
calls, and a final chunk with ``finishReason``, ``usageMetadata`` and the citations of the
text parts as ``groundingMetadata`` (unless the candidate's own fields carry it). Another
candidate's updates go out as chunks of that candidate (``index``), by an encoder of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import assert_never

from interlock.codecs._failures import named_code
from interlock.codecs._sse import SseEvent
from interlock.codecs.gemini._citations import CITATION, GROUNDING, encode_citations
from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._errors import encode_error
from interlock.codecs.gemini._finish import encode_finish
from interlock.codecs.gemini._logprobs import AVERAGE, RESULT, encode_logprobs
from interlock.codecs.gemini._usage import encode_usage
from interlock.codecs.gemini._wire import DIALECT, is_signature, object_entry
from interlock.transcript import (
    CandidateUpdate,
    JsonObject,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ReplayPolicy,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    TokenLogprob,
    Update,
    UsageUpdate,
)

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_CHUNK_HEAD = '{"candidates":[{"content":{"role":"model","parts":['


@dataclass(slots=True)
class _Sent:
    """A text-like part being streamed out: the text already sent."""

    thought: bool
    sent: str = ""
    tokens: int = 0
    """How many of a text part's token log-probabilities went out."""


class StreamEncoder:
    """Canonical updates → Gemini SSE events, each a ``GenerateContentResponse`` chunk."""

    __slots__ = (
        "_cited",
        "_encoder",
        "_id",
        "_index",
        "_marks",
        "_model",
        "_others",
        "_sent",
        "_tail",
        "_usage",
    )

    def __init__(self, index: int = 0) -> None:
        self._index = index
        """The candidate this encoder writes."""
        self._others: dict[int, StreamEncoder] = {}
        self._encoder = PartEncoder(ReplayPolicy(), for_request=False, prefix="message")
        self._tail = "}"
        self._id: str | None = None
        self._model: str | None = None
        self._usage: JsonObject | None = None
        self._sent: dict[int, _Sent] = {}
        self._marks: JsonObject | None = None
        self._cited: dict[int, TextPart] = {}

    def encode(self, update: Update) -> list[SseEvent]:
        """The SSE events for one update (often none until a part is complete)."""
        match update:
            case ResponseStarted():
                self._id, self._model = update.id, update.model
                self._marks = update.extra.get(DIALECT)
                self._tail = _JSON(self._stamp({}))[1:] if update.id or update.model else "}"
                if self._tail != "}":
                    self._tail = "," + self._tail
                return []
            case PartStarted(index=index, part=part):
                return self._started(index, part)
            case PartDelta(index=index, delta=delta, logprobs=tokens):
                sent = self._sent.get(index)
                if sent is None or not (delta or tokens):
                    return []
                sent.sent += delta
                sent.tokens += len(tokens)
                return [self._text_chunk(delta, sent.thought, tokens)]
            case PartFinished(index=index, part=part):
                return self._finished(index, part)
            case UsageUpdate(usage=usage):
                self._usage = encode_usage(usage)
                return []
            case ResponseFinished():
                return [self._final(update)]
            case StreamFailed():
                body = encode_error(update.status or 500, update.message, code=named_code(update))
                return [SseEvent(data=_JSON(body))]
            case CandidateUpdate():
                other = self._others.get(update.candidate)
                if other is None:
                    other = self._others[update.candidate] = StreamEncoder(update.candidate)
                    other._id, other._model, other._tail = self._id, self._model, self._tail
                return other.encode(update.update)
            case _:
                assert_never(update)

    def finish(self) -> list[SseEvent]:
        """Nothing is buffered: every chunk went out with the update that completed it."""
        return []

    def _started(self, index: int, part: Part) -> list[SseEvent]:
        if isinstance(part, TextPart) or (
            isinstance(part, ReasoningPart) and part.reasoning_kind != "encrypted"
        ):
            sent = _Sent(thought=isinstance(part, ReasoningPart))
            self._sent[index] = sent
            signed = part.signature if isinstance(part, TextPart) else part.opaque
            if part.text and signed is None and not part.extra.get(DIALECT):
                sent.sent = part.text
                tokens = part.logprobs if isinstance(part, TextPart) else ()
                sent.tokens = len(tokens)
                return [self._text_chunk(part.text, sent.thought, tokens)]
        return []

    def _finished(self, index: int, part: Part) -> list[SseEvent]:
        if isinstance(part, TextPart):
            self._cited[index] = part
        sent = self._sent.pop(index, None)
        tokens = part.logprobs if isinstance(part, TextPart) else ()
        if sent is not None and sent.sent and isinstance(part, TextPart | ReasoningPart):
            remainder = part.text[len(sent.sent) :] if part.text.startswith(sent.sent) else ""
            unsent = tokens[sent.tokens :]
            signed = part.signature if isinstance(part, TextPart) else part.opaque
            if not is_signature(signed):
                return [self._text_chunk(remainder, sent.thought, unsent)] if remainder else []
            tail = _fragment(remainder, sent.thought)
            tail["thoughtSignature"] = signed.data  # pyright: ignore[reportOptionalMemberAccess] -- is_signature checked it
            return [self._chunk(tail, unsent)]
        wire = self._encoder.encode(part, -1, index)
        if wire is None or wire == {"text": ""}:
            return []
        return [self._chunk(wire, tokens)]

    def _middle(self, tokens: tuple[TokenLogprob, ...]) -> str:
        """What closes a chunk's candidate: its index, and its tokens' log-probabilities."""
        logprobs = _JSON(encode_logprobs(tokens))[1:-1] if tokens else ""
        return f']}},"index":{self._index}{"," + logprobs if logprobs else ""}}}]'

    def _chunk(self, part: JsonObject, tokens: tuple[TokenLogprob, ...] = ()) -> SseEvent:
        return SseEvent(data=f"{_CHUNK_HEAD}{_JSON(part)}{self._middle(tokens)}{self._tail}")

    def _text_chunk(
        self, text: str, thought: bool, tokens: tuple[TokenLogprob, ...] = ()
    ) -> SseEvent:
        body = (
            f'{{"text":{_JSON(text)},"thought":true}}' if thought else f'{{"text":{_JSON(text)}}}'
        )
        return SseEvent(data=f"{_CHUNK_HEAD}{body}{self._middle(tokens)}{self._tail}")

    def _stamp(self, chunk: JsonObject) -> JsonObject:
        if self._model is not None:
            chunk["modelVersion"] = self._model
        if self._id is not None:
            chunk["responseId"] = self._id
        return chunk

    def _final(self, update: ResponseFinished) -> SseEvent:
        # The candidate's own fields come with the finish when the stream is relayed, or
        # with the start when a whole (folded) response is streamed.
        marks = update.extra.get(DIALECT, self._marks)
        candidate: JsonObject = {}
        finish = encode_finish(
            update.finish_reason, update.native_finish_reason, foreign=marks is None
        )
        if finish is not None:
            candidate["finishReason"] = finish
        kept = object_entry(marks, "candidate") if marks is not None else {"index": self._index}
        kept = {key: value for key, value in kept.items() if key not in (RESULT, AVERAGE)}
        # (the tokens went out with the text they belong to)
        if GROUNDING not in kept and CITATION not in kept:
            texts = [self._cited[index] for index in sorted(self._cited)]
            cited = [(None, part.text, part.citations) for part in texts]
            candidate.update(encode_citations(cited, base_offsets=True))
        candidate.update(kept)
        chunk: JsonObject = {"candidates": [candidate]}
        if self._usage is not None:
            chunk["usageMetadata"] = self._usage
        self._stamp(chunk)
        if marks is not None:
            chunk.update(object_entry(marks, "fields"))
        return SseEvent(data=_JSON(chunk))


def _fragment(text: str, thought: bool) -> JsonObject:
    return {"text": text, "thought": True} if thought else {"text": text}
