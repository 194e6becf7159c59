"""Loop events and the one fold from events to a :class:`LoopResult`.

The loop is an async generator of these events; the non-streaming API folds the same
events with :func:`fold_events`, so the two renderings cannot disagree. Every event that
contributes to a caller-visible message names it with ``message_id``; messages appear in
the result in the order their first event arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Literal, TypeAlias, assert_never, cast

from interlock.core_loop._ledger import ApprovalRule
from interlock.transcript import (
    ApprovalRequestPart,
    InputRequestPart,
    Message,
    Part,
    ResponseBuilder,
    Role,
    ToolCallPart,
    ToolResultPart,
    Update,
    Usage,
)

Outcome: TypeAlias = Literal[
    "final", "awaiting_approval", "awaiting_input", "awaiting_client", "terminated", "limit"
]
"""How a run ended. ``final``: the model answered. ``awaiting_*``: paused for decisions,
user input or client-executed calls. ``terminated``: middleware or an unknown call stopped
the run. ``limit``: a limit was hit and the final tool-less answer was returned."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUpdate:
    """One model stream update, with occurrence ids already assigned to tool calls.

    ``message_id`` is the assistant message the update builds (one per model call; a
    fallback text after a limit gets its own).
    """

    iteration: int
    message_id: str
    update: Update


_new = object.__new__
SET_ITERATION, SET_MESSAGE_ID, SET_UPDATE = (
    cast("Callable[[object, object], None]", vars(ModelUpdate)[name].__set__)
    for name in ("iteration", "message_id", "update")
)
assert tuple(item.name for item in fields(ModelUpdate)) == ("iteration", "message_id", "update")
"""The slot writers of :class:`ModelUpdate`'s fields (:func:`model_update`; the loop
inlines it where it yields each streamed update)."""


def model_update(iteration: int, message_id: str, update: Update) -> ModelUpdate:
    """``ModelUpdate(iteration=…, message_id=…, update=…)``, built by writing its slots
    (no keyword packing, no ``object.__setattr__`` per field): one per streamed update.
    Equal to and as frozen as the class's own."""
    event = _new(ModelUpdate)
    SET_ITERATION(event, iteration)
    SET_MESSAGE_ID(event, message_id)
    SET_UPDATE(event, update)
    return event


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    """A local tool occurrence begins executing (journal ``started`` already written).

    ``approved_by`` says what let a call that needs approval run without a human
    decision: the thread's standing :class:`ApprovalRule` that matched it, or
    ``"auto_approve"`` (the agent's callable); ``None`` when the call needed no approval
    or a human decided.
    """

    message_id: str
    call: ToolCallPart
    approved_by: ApprovalRule | Literal["auto_approve"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    """A terminal result for one occurrence, in the tool message ``message_id``.

    Emitted in model order for a batch, whether the result came from execution, a denial,
    an unknown tool or the journal.
    """

    message_id: str
    call: ToolCallPart
    result: ToolResultPart


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested:
    """An approval request surfaced in the assistant control message ``message_id``."""

    message_id: str
    request: ApprovalRequestPart


@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequested:
    """A tool's request for user input, in the assistant control message ``message_id``."""

    message_id: str
    request: InputRequestPart


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCallsPending:
    """Client-owned calls the caller must execute; the run ends after this event."""

    calls: tuple[ToolCallPart, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The last event of every run.

    ``response_id`` is the continuation id to send next time when the agent uses
    service-side state (cleared, ``None``, when the run stopped on a limit or termination).
    The ``pending_*`` fields repeat what is awaited so a consumer needs only this event.
    """

    outcome: Outcome
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None
    iterations: int = 0
    function_calls: int = 0
    reason: str | None = None
    pending_approvals: tuple[ApprovalRequestPart, ...] = ()
    pending_inputs: tuple[InputRequestPart, ...] = ()
    pending_calls: tuple[ToolCallPart, ...] = ()


LoopEvent: TypeAlias = (
    ModelUpdate
    | ToolStarted
    | ToolFinished
    | ApprovalRequested
    | InputRequested
    | ClientCallsPending
    | RunFinished
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopResult:
    """Everything a non-streaming caller sees: the fold of one run's events.

    ``messages`` are only the messages this run produced (assistant turns, tool results,
    control requests), never the caller's input.
    """

    messages: tuple[Message, ...]
    outcome: Outcome
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None
    iterations: int = 0
    function_calls: int = 0
    reason: str | None = None
    pending_approvals: tuple[ApprovalRequestPart, ...] = ()
    pending_inputs: tuple[InputRequestPart, ...] = ()
    pending_calls: tuple[ToolCallPart, ...] = ()

    @property
    def text(self) -> str:
        """The text of the last assistant message that has any."""
        for message in reversed(self.messages):
            if message.role == "assistant" and message.text:
                return message.text
        return ""


class _Parts:
    """A tool or control message being folded: its role and parts in event order."""

    __slots__ = ("parts", "role")

    def __init__(self, role: Role) -> None:
        self.role: Role = role
        self.parts: list[Part] = []


def _message(message_id: str, draft: ResponseBuilder | _Parts) -> Message | None:
    if isinstance(draft, ResponseBuilder):
        role: Role = "assistant"
        parts = draft.build().message.parts
    else:
        role, parts = draft.role, tuple(draft.parts)
    return Message(role=role, parts=parts, id=message_id) if parts else None


class EventFolder:
    """Incremental fold state; :func:`fold_events` is the usual entry point.

    A model message is folded by a :class:`ResponseBuilder` (the transcript's one fold);
    every other message collects its parts.
    """

    def __init__(self) -> None:
        self._drafts: dict[str, ResponseBuilder | _Parts] = {}
        self._finished: RunFinished | None = None

    def builder(self, message_id: str) -> ResponseBuilder:
        """The builder folding model message ``message_id``: adding an update to it is
        folding that update's :class:`ModelUpdate` (the loop folds a model call's stream
        this way while it answers from the same builder)."""
        draft = self._drafts.get(message_id)
        if draft is None:
            draft = self._drafts[message_id] = ResponseBuilder()
        assert isinstance(draft, ResponseBuilder), "model updates build a model message"
        return draft

    def _parts(self, message_id: str, role: Role) -> list[Part]:
        draft = self._drafts.get(message_id)
        if draft is None:
            draft = self._drafts[message_id] = _Parts(role)
        assert isinstance(draft, _Parts), "a model message receives only model updates"
        return draft.parts

    def add(self, event: LoopEvent) -> None:
        """Apply one event."""
        match event:
            case ModelUpdate(message_id=message_id, update=update):
                self.builder(message_id).add(update)
            case ToolFinished(message_id=message_id, result=result):
                self._parts(message_id, "tool").append(result)
            case ApprovalRequested(message_id=message_id, request=request):
                self._parts(message_id, "assistant").append(request)
            case InputRequested(message_id=message_id, request=request):
                self._parts(message_id, "assistant").append(request)
            case ToolStarted() | ClientCallsPending():
                pass
            case RunFinished():
                self._finished = event
            case _:
                assert_never(event)

    def result(self) -> LoopResult:
        """The result; raises ``ValueError`` if the run never finished."""
        finished = self._finished
        if finished is None:
            raise ValueError("the event stream ended without RunFinished")
        messages = [
            message
            for message_id, draft in self._drafts.items()
            if (message := _message(message_id, draft)) is not None
        ]
        return LoopResult(
            messages=tuple(messages),
            outcome=finished.outcome,
            usage=finished.usage,
            response_id=finished.response_id,
            iterations=finished.iterations,
            function_calls=finished.function_calls,
            reason=finished.reason,
            pending_approvals=finished.pending_approvals,
            pending_inputs=finished.pending_inputs,
            pending_calls=finished.pending_calls,
        )


def fold_events(events: Iterable[LoopEvent]) -> LoopResult:
    """Fold one run's events into its :class:`LoopResult`."""
    folder = EventFolder()
    for event in events:
        folder.add(event)
    return folder.result()


async def fold_event_stream(events: AsyncIterable[LoopEvent]) -> LoopResult:
    """Fold an async stream of events (the non-streaming API)."""
    folder = EventFolder()
    async for event in events:
        folder.add(event)
    return folder.result()


def add_usage(total: Usage, more: Usage | None) -> Usage:
    """The sum of two usage records (``extra`` is not summed)."""
    if more is None:
        return total
    return replace(
        total,
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        reasoning_tokens=total.reasoning_tokens + more.reasoning_tokens,
        cached_input_tokens=total.cached_input_tokens + more.cached_input_tokens,
        tool_prompt_tokens=total.tool_prompt_tokens + more.tool_prompt_tokens,
    )
