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

from interlock.transcript._messages import FinishReason, Message, Response, Usage
from interlock.transcript._parts import (
    JsonObject,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
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
    """Text appended to the part at ``index``: text, reasoning text, or tool-call arguments."""

    index: int
    delta: str


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


Update: TypeAlias = (
    ResponseStarted
    | PartStarted
    | PartDelta
    | PartFinished
    | UsageUpdate
    | ResponseFinished
    | StreamFailed
)


class StreamFoldError(ValueError):
    """The updates are inconsistent (a delta for a part never started, …)."""


def _append(part: Part, delta: str) -> Part:
    if isinstance(part, TextPart | RefusalPart | ReasoningPart):
        return replace(part, text=part.text + delta)
    if isinstance(part, ToolCallPart):
        return replace(part, arguments=part.arguments + delta)
    raise StreamFoldError(f"cannot append text to a {part.kind} part")


@dataclass(slots=True)
class ResponseBuilder:
    """Incremental fold state; :func:`fold_updates` is the usual entry point."""

    parts: dict[int, Part] = field(default_factory=dict[int, Part])
    pending_text: dict[int, list[str]] = field(default_factory=dict[int, list[str]])
    started: ResponseStarted | None = None
    finished: ResponseFinished | None = None
    failed: StreamFailed | None = None
    usage: Usage | None = None

    def add(self, update: Update) -> None:
        """Apply one update."""
        match update:
            case ResponseStarted():
                self.started = update
            case PartStarted(index=index, part=part):
                self._flush(index)
                self.parts[index] = part
            case PartDelta(index=index, delta=delta):
                if index not in self.parts:
                    raise StreamFoldError(f"delta for part {index} before it started")
                self.pending_text.setdefault(index, []).append(delta)
            case PartFinished(index=index, part=part):
                self.pending_text.pop(index, None)
                self.parts[index] = part
            case UsageUpdate(usage=usage):
                self.usage = usage
            case ResponseFinished():
                self.finished = update
            case StreamFailed():
                self.failed = update
            case _:
                assert_never(update)

    def _flush(self, index: int) -> None:
        chunks = self.pending_text.pop(index, None)
        if chunks:
            self.parts[index] = _append(self.parts[index], "".join(chunks))

    def build(self) -> Response:
        """The response as folded so far."""
        for index in list(self.pending_text):
            self._flush(index)
        parts = tuple(self.parts[index] for index in sorted(self.parts))
        started = self.started or ResponseStarted()
        finished = self.finished
        return Response(
            message=Message(role="assistant", parts=parts),
            id=started.id,
            model=started.model,
            created=started.created,
            finish_reason=finished.finish_reason if finished else None,
            native_finish_reason=finished.native_finish_reason if finished else None,
            usage=self.usage,
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
    if response.usage is not None:
        updates.append(UsageUpdate(usage=response.usage))
    updates.append(
        ResponseFinished(
            finish_reason=response.finish_reason,
            native_finish_reason=response.native_finish_reason,
        )
    )
    return updates
