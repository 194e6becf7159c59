"""Stream updates and the one fold from updates to a complete response.

A stream decoder turns wire events into these updates; a stream encoder turns them into
wire events; the loop emits them. Parts are addressed by ``index``: their position in the
response message. A decoder maps provider identities (Chat ``tool_calls[].index``,
Responses ``item_id``, Gemini chunk order) to indexes, so parallel tool-call deltas land
on their own call, never "the last one".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeAlias, assert_never

from interlock.transcript._messages import Alternative, FinishReason, Message, Response, Usage
from interlock.transcript._parts import (
    JsonObject,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    TokenLogprob,
    ToolCallPart,
)


def _no_extra() -> Mapping[str, JsonObject]:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseStarted:
    """The response began; ids known so far."""

    id: str | None = None
    model: str | None = None
    created: int | None = None
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class PartStarted:
    """A new part at ``index`` with its initial content (text may be empty)."""

    index: int
    part: Part


@dataclass(frozen=True, slots=True, kw_only=True)
class PartDelta:
    """Text appended to the part at ``index``: text, reasoning text, or tool-call arguments.

    ``logprobs`` are the log-probabilities of the delta's tokens (text parts only), appended
    to the part's :attr:`~interlock.transcript.TextPart.logprobs`."""

    index: int
    delta: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PartFinished:
    """The part at ``index`` is complete; ``part`` is authoritative (e.g. full encrypted content)."""

    index: int
    part: Part


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdate:
    """Usage so far (the last one wins)."""

    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseFinished:
    """The response ended normally."""

    finish_reason: FinishReason | None = None
    native_finish_reason: str | None = None
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed:
    """The provider reported an error mid-stream (or the stream broke)."""

    code: str
    message: str
    status: int | None = None


CandidateStep: TypeAlias = PartStarted | PartDelta | PartFinished | ResponseFinished
"""What happens to another candidate: its parts and its end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateUpdate:
    """An update of candidate ``candidate`` (``>= 1``; candidate 0 is the response itself,
    whose updates are never wrapped). Its part indexes are its own, from 0. A consumer
    that shows one candidate ignores these."""

    candidate: int
    update: CandidateStep


Update: TypeAlias = (
    ResponseStarted
    | PartStarted
    | PartDelta
    | PartFinished
    | UsageUpdate
    | ResponseFinished
    | StreamFailed
    | CandidateUpdate
)


class StreamFoldError(ValueError):
    """The updates are inconsistent (a delta for a part never started, …)."""


def _append(part: Part, delta: str, logprobs: list[TokenLogprob]) -> Part:
    if isinstance(part, TextPart):
        if logprobs:
            return replace(part, text=part.text + delta, logprobs=(*part.logprobs, *logprobs))
        return replace(part, text=part.text + delta)
    if isinstance(part, RefusalPart | ReasoningPart):
        return replace(part, text=part.text + delta)
    if isinstance(part, ToolCallPart):
        return replace(part, arguments=part.arguments + delta)
    raise StreamFoldError(f"cannot append text to a {part.kind} part")


def _no_builders() -> dict[int, ResponseBuilder]:
    return {}


@dataclass(slots=True)
class ResponseBuilder:
    """Incremental fold state; :func:`fold_updates` is the usual entry point."""

    parts: dict[int, Part] = field(default_factory=dict[int, Part])
    pending_text: dict[int, list[str]] = field(default_factory=dict[int, list[str]])
    pending_logprobs: dict[int, list[TokenLogprob]] = field(
        default_factory=dict[int, list[TokenLogprob]]
    )
    started: ResponseStarted | None = None
    finished: ResponseFinished | None = None
    failed: StreamFailed | None = None
    usage: Usage | None = None
    alternatives: dict[int, ResponseBuilder] = field(default_factory=_no_builders)

    def add(self, update: Update) -> None:
        """Apply one update."""
        if type(update) is PartDelta and not update.logprobs:  # most updates: no pattern
            index = update.index
            if index not in self.parts:
                raise StreamFoldError(f"delta for part {index} before it started")
            pending = self.pending_text.get(index)
            if pending is None:
                self.pending_text[index] = [update.delta]
            else:
                pending.append(update.delta)
            return
        self._add(update)

    def _add(self, update: Update) -> None:
        match update:
            case ResponseStarted():
                self.started = update
            case PartStarted(index=index, part=part):
                self._flush(index)
                self.parts[index] = part
            case PartDelta(index=index, delta=delta, logprobs=logprobs):
                if index not in self.parts:
                    raise StreamFoldError(f"delta for part {index} before it started")
                self.pending_text.setdefault(index, []).append(delta)
                if logprobs:
                    self.pending_logprobs.setdefault(index, []).extend(logprobs)
            case PartFinished(index=index, part=part):
                self.pending_text.pop(index, None)
                self.pending_logprobs.pop(index, None)
                self.parts[index] = part
            case UsageUpdate(usage=usage):
                self.usage = usage
            case ResponseFinished():
                self.finished = update
            case StreamFailed():
                self.failed = update
            case CandidateUpdate(candidate=candidate, update=step):
                if candidate < 1:
                    raise StreamFoldError(f"candidate {candidate} is not another candidate")
                self.alternatives.setdefault(candidate, ResponseBuilder()).add(step)
            case _:
                assert_never(update)

    def _flush(self, index: int) -> None:
        chunks = self.pending_text.pop(index, None)
        logprobs = self.pending_logprobs.pop(index, None)
        if chunks or logprobs:
            self.parts[index] = _append(self.parts[index], "".join(chunks or ()), logprobs or [])

    def _message(self) -> Message:
        for index in list(self.pending_text):
            self._flush(index)
        for index in list(self.pending_logprobs):
            self._flush(index)
        return Message(
            role="assistant", parts=tuple(self.parts[index] for index in sorted(self.parts))
        )

    def _alternative(self) -> Alternative:
        finished = self.finished
        return Alternative(
            message=self._message(),
            finish_reason=finished.finish_reason if finished else None,
            native_finish_reason=finished.native_finish_reason if finished else None,
            extra=finished.extra if finished else {},
        )

    def build(self) -> Response:
        """The response as folded so far."""
        started = self.started or ResponseStarted()
        finished = self.finished
        return Response(
            message=self._message(),
            id=started.id,
            model=started.model,
            created=started.created,
            finish_reason=finished.finish_reason if finished else None,
            native_finish_reason=finished.native_finish_reason if finished else None,
            usage=self.usage,
            alternatives=tuple(
                self.alternatives[key]._alternative() for key in sorted(self.alternatives)
            ),
            extra={**started.extra, **(finished.extra if finished else {})},
        )


def fold_updates(updates: Iterable[Update]) -> Response:
    """Fold a stream of updates into the complete response it describes.

    This is the only aggregation function: non-streaming results, emulators, the loop
    and the proxy all use it, so a streamed and a non-streamed response cannot differ.
    """
    builder = ResponseBuilder()
    for update in updates:
        builder.add(update)
    return builder.build()


def response_to_updates(response: Response) -> list[Update]:
    """The canonical update sequence for a complete response (inverse of the fold)."""
    updates: list[Update] = [
        ResponseStarted(
            id=response.id, model=response.model, created=response.created, extra=response.extra
        )
    ]
    for index, part in enumerate(response.message.parts):
        updates.append(PartStarted(index=index, part=part))
        updates.append(PartFinished(index=index, part=part))
    for candidate, alternative in enumerate(response.alternatives, 1):
        for index, part in enumerate(alternative.message.parts):
            updates.append(
                CandidateUpdate(candidate=candidate, update=PartStarted(index=index, part=part))
            )
            updates.append(
                CandidateUpdate(candidate=candidate, update=PartFinished(index=index, part=part))
            )
        ending = ResponseFinished(
            finish_reason=alternative.finish_reason,
            native_finish_reason=alternative.native_finish_reason,
            extra=alternative.extra,
        )
        updates.append(CandidateUpdate(candidate=candidate, update=ending))
    if response.usage is not None:
        updates.append(UsageUpdate(usage=response.usage))
    updates.append(
        ResponseFinished(
            finish_reason=response.finish_reason,
            native_finish_reason=response.native_finish_reason,
        )
    )
    return updates
