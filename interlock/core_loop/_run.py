"""The function-calling loop, written once as an async generator of :mod:`._events`.

One run: validate and claim the caller's decisions against the ledger, settle the held
batches they complete, then call the model until it answers without local calls, the run
pauses, or a limit forces one final call with tools disabled.

The model stream is consumed in :meth:`Run.events` itself, so a model update reaches the
caller through one generator; the steps around it are plain coroutines that leave their
events in an outbox, and only a batch's execution (whose events must stream while tools
run) is a second generator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import assert_never

from interlock.core_loop._agent import (
    Agent,
    IdSource,
    ModelStreamError,
    random_ids,
)
from interlock.core_loop._batch import BatchSettler, Counters
from interlock.core_loop._decisions import Resumption, claim_decisions
from interlock.core_loop._events import (
    SET_ITERATION,
    SET_MESSAGE_ID,
    SET_UPDATE,
    EventFolder,
    LoopEvent,
    LoopResult,
    ModelUpdate,
    RunFinished,
    add_usage,
    model_update,
)
from interlock.core_loop._history import project_history
from interlock.core_loop._ledger import ApprovalRule, HeldBatch, LedgerStore
from interlock.core_loop._model import ChatModel
from interlock.core_loop._state import AgentState
from interlock.core_loop._step import (
    RUN_AGAIN,
    AwaitingApproval,
    AwaitingClient,
    AwaitingInput,
    FinalAnswer,
    LimitReached,
    RunAgain,
    Step,
    Stop,
    Terminated,
    stop_outcome,
)
from interlock.core_loop._tools import ToolSet
from interlock.transcript import (
    ApprovalRequestPart,
    Continuation,
    JsonValue,
    Message,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    Request,
    Response,
    ResponseBuilder,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    Update,
    Usage,
    response_to_updates,
)

_VISIBLE = ("text", "refusal", "media", "json")
_new = object.__new__
_NO_TOOLS = ToolChoice(mode="none")
_STATELESS = Continuation()


class Run(BatchSettler):
    """The state of one run. Use :func:`run_loop` / :func:`run_agent`."""

    def __init__(
        self,
        agent: Agent,
        model: ChatModel,
        messages: str | Sequence[Message],
        *,
        ledger: LedgerStore,
        thread_id: str,
        previous_response_id: str | None,
        ids: IdSource,
        exclusive: bool = False,
        state: AgentState | None = None,
        folder: EventFolder | None = None,
    ) -> None:
        self.agent = agent
        self.folder = folder or EventFolder()
        self.exclusive = exclusive
        self.model = model
        self.input = _input_messages(messages)
        self.ledger = ledger
        self.thread_id = thread_id
        self.ids = ids
        self.toolset = ToolSet(agent.tools, state)
        self.counters = Counters()
        self.known_results: dict[str, ToolResultPart] = {}
        self.rules: tuple[ApprovalRule, ...] | None = None
        self.answers: dict[str, JsonValue] = {}
        self.step: Step = RUN_AGAIN
        self.settled: list[Message] = []
        self.delivered: list[Message] = []
        self.outbox: list[LoopEvent] = []
        self.history: list[Message] = []
        self.unsent: list[Message] = []
        self.response_id = previous_response_id if agent.service_state else None
        self.usage = Usage()
        self.calls_made = 0
        self.limit_reason: str | None = None
        self.system: tuple[Message, ...] = (
            (Message(role="system", parts=(TextPart(text=agent.instructions),)),)
            if agent.instructions
            else ()
        )

    async def events(self) -> AsyncIterator[LoopEvent]:
        """The run's events; the last one is always :class:`RunFinished`.

        A model call's stream is consumed here, in this generator (see :class:`_Call`), so
        each model update reaches the caller through no other generator. Every event is
        folded into :attr:`folder` before it is yielded; a model call's updates by the
        builder the call is answered from, so nothing is folded twice.
        """
        fold = self.folder.add
        async for event in self._resume():
            fold(event)
            yield event
        while True:
            step = self.step
            match step:
                case RunAgain():
                    call = self._call()
                    plain = call.dropped is None  # tools enabled: nothing is dropped
                    try:
                        async for raw in call.stream:
                            if plain and type(raw) is PartDelta:  # most updates
                                call.builder.add(raw)
                                event = _new(ModelUpdate)  # model_update, inline
                                SET_ITERATION(event, call.iteration)
                                SET_MESSAGE_ID(event, call.message_id)
                                SET_UPDATE(event, raw)
                                yield event
                                continue
                            event = call.event(self._assign(raw, call.occurrences))
                            if event is None:
                                continue
                            yield event
                            if type(event.update) is StreamFailed:
                                update = event.update
                                raise ModelStreamError(update.code, update.message, update.status)
                    except Exception:
                        await self.ledger.save_budget(self.thread_id, self.counters.frozen())
                        raise
                    finally:
                        await _close(call.stream)
                    async for event in self._after_call(call):
                        fold(event)
                        yield event
                case (
                    FinalAnswer()
                    | AwaitingApproval()
                    | AwaitingInput()
                    | AwaitingClient()
                    | Terminated()
                    | LimitReached()
                ):
                    finished = await self._finish(step)
                    fold(finished)
                    yield finished
                    return
                case _:
                    assert_never(step)

    def _call(self) -> _Call:
        """Start one model call (the first half of a model step)."""
        tools_enabled = self._next_call()
        message_id = self.ids("msg")
        return _Call(
            message_id=message_id,
            builder=self.folder.builder(message_id),
            iteration=self.calls_made,
            tools_enabled=tools_enabled,
            stream=self.model.stream(self._request(tools_enabled)),
        )

    async def _after_call(self, call: _Call) -> AsyncIterator[LoopEvent]:
        """The second half of a model step: the answer and the batch of local calls."""
        batch = await self._answered(call.builder.build(), call.message_id, call.tools_enabled)
        for event in self._drain():
            yield event
        if batch is not None:
            async for event in self.settle(batch, {}, held=False):
                yield event
            self._after_batch()

    async def _resume(self) -> AsyncIterator[LoopEvent]:
        """Claim the caller's decisions and settle the held batches they complete."""
        resumption = await claim_decisions(self, self.input, self.response_id is not None)
        self.known_results = resumption.known_results
        self.answers = resumption.answers
        if resumption.batches or resumption.replays:
            self.counters = Counters.of(await self.ledger.budget(self.thread_id))
        self.calls_made = self.counters.iterations
        for calls, made_by in resumption.replays:
            # Under continuation from a later response than the one that made the calls,
            # the service already holds their results: shown to the caller, not re-sent.
            delivered = None not in (self.response_id, made_by) and self.response_id != made_by
            await self.replay(calls, delivered=delivered)
        for event in self._drain():
            yield event
        for batch in resumption.batches:
            async for event in self.settle(batch, resumption.records):
                yield event
            match self.step:
                case RunAgain():
                    self._check_limits()
                case _:
                    return
        self._start_history(resumption)

    def _drain(self) -> list[LoopEvent]:
        events = self.outbox
        self.outbox = []
        return events

    def _start_history(self, resumption: Resumption) -> None:
        assigned = resumption.messages
        current = resumption.current_from
        if self.response_id is not None:
            # The service holds everything before the current input, hosted approval
            # requests included: a decision on one is sent now, its request never again.
            stored = (
                part.approval_id
                for message in assigned[:current]
                for part in message.parts
                if isinstance(part, ApprovalRequestPart) and part.call.owner == "hosted"
            )
            trailing = project_history(
                assigned[current:], current_from=0, stored_hosted_requests=frozenset(stored)
            )
            self.unsent = [*self.settled, *trailing]
        settled = [*self.delivered, *self.settled]
        self.history = list(project_history([*assigned, *settled], current_from=current))
        self.settled.clear()

    def _check_limits(self) -> None:
        limits = self.agent.limits
        counters = self.counters
        if (
            limits.max_function_calls is not None
            and counters.function_calls >= limits.max_function_calls
        ):
            self.limit_reason = self.limit_reason or "max_function_calls"
        errors = limits.max_consecutive_errors
        if errors is not None and counters.consecutive_errors >= errors:
            self.limit_reason = self.limit_reason or "max_consecutive_errors"

    def _next_call(self) -> bool:
        """Count the model call about to be made; False when tools must be disabled."""
        if (
            self.limit_reason is None
            and self.counters.iterations >= self.agent.limits.max_iterations
        ):
            self.limit_reason = "max_iterations"
        tools_enabled = self.limit_reason is None
        if tools_enabled:
            self.counters.iterations += 1
        self.calls_made += 1
        return tools_enabled

    async def _answered(
        self, response: Response, message_id: str, tools_enabled: bool
    ) -> HeldBatch | None:
        """Record the model's answer; the local calls it holds, if the run goes on."""
        message = Message(role="assistant", parts=response.message.parts, id=message_id)
        self.usage = add_usage(self.usage, response.usage)
        self.history.append(message)
        self.unsent = []
        if self.agent.service_state and response.id is not None:
            self.response_id = response.id
        if not tools_enabled:
            self.outbox += self._fallback(message)
            self.step = LimitReached(reason=self.limit_reason)
            return None
        calls = tuple(
            part for part in message.parts if type(part) is ToolCallPart and part.owner != "hosted"
        )
        if not calls:
            self.step = self._final(message)
            return None
        return await self.plan_batch(calls)

    def _after_batch(self) -> None:
        if type(self.step) is RunAgain:
            self.history += self.settled
            self.unsent += self.settled
            self.settled.clear()
            self._check_limits()

    def _final(self, message: Message) -> FinalAnswer | AwaitingApproval:
        hosted = tuple(
            part
            for part in message.parts
            if isinstance(part, ApprovalRequestPart) and part.call.owner == "hosted"
        )
        if hosted:
            return AwaitingApproval(approvals=hosted)
        return FinalAnswer()

    def _request(self, tools_enabled: bool) -> Request:
        agent = self.agent
        if self.response_id is not None:
            messages: Sequence[Message] = self.unsent
        elif agent.compaction is not None:
            messages = agent.compaction(self.history)
        else:
            messages = self.history
        return Request(
            model=agent.model,
            messages=(*self.system, *messages),
            tools=self.toolset.specs,
            hosted_tools=agent.hosted_tools,
            tool_choice=None if tools_enabled else _NO_TOOLS,
            options=agent.options,
            continuation=(
                Continuation(store=True, previous_response_id=self.response_id)
                if agent.service_state
                else _STATELESS
            ),
        )

    def _assign(self, update: Update, occurrences: dict[int, tuple[Part, ToolCallPart]]) -> Update:
        """Give streamed local calls their occurrence id and owner before anyone sees them.

        The assignment is remembered per index with the part it was made for, so a
        finished part that is the started one (or equal to it) is not rebuilt.
        """
        kind = type(update)
        if kind is not PartStarted and kind is not PartFinished:
            return update
        assert isinstance(update, PartStarted | PartFinished)
        part = update.part
        if type(part) is not ToolCallPart or part.owner == "hosted":
            return update
        known = occurrences.get(update.index)
        if known is not None and (known[0] is part or known[0] == part):
            assigned = known[1]
        elif known is not None and known[1] == part:
            return update
        else:
            assigned = self._assigned(part, known[1] if known else None)
            occurrences[update.index] = (part, assigned)
        if assigned is part:
            return update
        if isinstance(update, PartStarted):
            return PartStarted(index=update.index, part=assigned)
        return PartFinished(index=update.index, part=assigned)

    def _assigned(self, part: ToolCallPart, known: ToolCallPart | None) -> ToolCallPart:
        occurrence = (
            (known.occurrence_id if known else None) or part.occurrence_id or self.ids("occ")
        )
        tool = self.toolset.by_name.get(part.name)
        handed_out = not self.agent.invoke_functions or (tool is not None and tool.client_owned)
        owner = "client" if handed_out else part.owner
        if part.occurrence_id != occurrence or part.owner != owner:
            return replace(part, occurrence_id=occurrence, owner=owner)
        return part

    def _fallback(self, message: Message) -> list[LoopEvent]:
        """A deterministic text when the final tool-less answer shows nothing."""
        visible = any(
            (part.kind in _VISIBLE and not (isinstance(part, TextPart) and not part.text.strip()))
            or (isinstance(part, ApprovalRequestPart) and part.call.owner == "hosted")
            for part in message.parts
        )
        if visible:
            return []
        message_id = self.ids("msg")
        text = Message(role="assistant", parts=(TextPart(text=self.agent.fallback_text),))
        updates = response_to_updates(Response(message=text, finish_reason="stop"))
        return [
            ModelUpdate(iteration=self.calls_made, message_id=message_id, update=update)
            for update in updates
        ]

    async def _finish(self, stop: Stop) -> RunFinished:
        budget = self.counters.frozen()
        await self.ledger.save_budget(self.thread_id, budget)
        outcome = stop_outcome(stop)
        stopped = outcome in ("limit", "terminated")
        return RunFinished(
            outcome=outcome,
            usage=self.usage,
            response_id=None if stopped else self.response_id,
            iterations=budget.iterations,
            function_calls=budget.function_calls,
            reason=stop.reason if isinstance(stop, Terminated | LimitReached) else None,
            pending_approvals=stop.approvals if isinstance(stop, AwaitingApproval) else (),
            pending_inputs=stop.inputs if isinstance(stop, AwaitingInput) else (),
            pending_calls=stop.calls if isinstance(stop, AwaitingClient) else (),
        )


class _Call:
    """One model call of a run while its stream is consumed (see :meth:`Run.events`).

    Once tools are disabled (``tools_enabled`` false) the updates of locally actionable
    content are dropped (``dropped`` holds their part indices); every other update joins
    ``builder`` (the run's fold of this message) and reaches the caller as a
    :class:`ModelUpdate`.
    """

    __slots__ = (
        "builder",
        "dropped",
        "iteration",
        "message_id",
        "occurrences",
        "stream",
        "tools_enabled",
    )

    def __init__(
        self,
        *,
        message_id: str,
        builder: ResponseBuilder,
        iteration: int,
        tools_enabled: bool,
        stream: AsyncIterator[Update],
    ) -> None:
        self.message_id = message_id
        self.iteration = iteration
        self.tools_enabled = tools_enabled
        self.stream = stream
        self.builder = builder
        self.occurrences: dict[int, tuple[Part, ToolCallPart]] = {}
        self.dropped: set[int] | None = None if tools_enabled else set()

    def event(self, update: Update) -> ModelUpdate | None:
        """The event of one (assigned) update; ``None`` when it is dropped."""
        if self.dropped is not None and _actionable(update, self.dropped):
            return None
        self.builder.add(update)
        return model_update(self.iteration, self.message_id, update)


async def _close(stream: AsyncIterator[Update]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


def _actionable(update: Update, dropped: set[int]) -> bool:
    """True for updates of locally actionable content once tools are disabled.

    Local and client calls and local approval requests are dropped; hosted pairs, hosted
    approval requests and every other update stay.
    """
    if isinstance(update, PartStarted | PartFinished):
        part = update.part
        if (isinstance(part, ToolCallPart) and part.owner != "hosted") or (
            isinstance(part, ApprovalRequestPart) and part.call.owner != "hosted"
        ):
            dropped.add(update.index)
            return True
        return update.index in dropped
    if isinstance(update, PartDelta):
        return update.index in dropped
    return False


def _input_messages(messages: str | Sequence[Message]) -> tuple[Message, ...]:
    """The run's input: a plain string is shorthand for one user text message."""
    if isinstance(messages, str):
        return (Message(role="user", parts=(TextPart(text=messages),)),)
    return tuple(messages)


def run_loop(
    agent: Agent,
    model: ChatModel,
    messages: str | Sequence[Message],
    *,
    ledger: LedgerStore,
    thread_id: str,
    previous_response_id: str | None = None,
    ids: IdSource = random_ids,
    exclusive: bool = False,
    state: AgentState | None = None,
    folder: EventFolder | None = None,
) -> AsyncIterator[LoopEvent]:
    """Run the loop over ``messages`` (the thread's transcript plus the new input).

    Yields :mod:`loop events <interlock.core_loop._events>`; the last is ``RunFinished``.
    A plain string is shorthand for ``[Message(role="user", parts=(TextPart(text=…),))]``
    (a new conversation with one user message); it behaves exactly like that list.
    Decisions (approval responses, input answers, client results) are taken from the
    messages after the last assistant message. A decision that does not match live ledger
    state raises :class:`DecisionRefusedError` before anything runs. ``messages`` is never
    modified. Cancelling the consuming task cancels the model stream and running tools.

    ``exclusive`` is the caller's promise that no other run on ``thread_id`` is active
    (the gateway holds a per-thread lease): an execution journaled ``started`` without a
    result is then known to be interrupted (a cancel, a lost client, a crash), so an
    identical replay of its approval settles it as ``interrupted`` instead of being
    refused as ``approval_consumed`` — the thread goes on, and nothing runs again.

    ``state`` is shared with the run's tools (:attr:`ToolContext.state`).

    ``folder`` (if given) receives every event before it is yielded, so once
    ``RunFinished`` is out, ``folder.result()`` is :func:`fold_events` of the events
    without a second fold (the model's updates are folded once, by the builder the loop
    answers from).
    """
    run = Run(
        agent,
        model,
        messages,
        ledger=ledger,
        thread_id=thread_id,
        previous_response_id=previous_response_id,
        ids=ids,
        exclusive=exclusive,
        state=state,
        folder=folder,
    )
    return run.events()


async def run_agent(
    agent: Agent,
    model: ChatModel,
    messages: str | Sequence[Message],
    *,
    ledger: LedgerStore,
    thread_id: str,
    previous_response_id: str | None = None,
    ids: IdSource = random_ids,
    exclusive: bool = False,
    state: AgentState | None = None,
) -> LoopResult:
    """The non-streaming API: the fold of :func:`run_loop`'s events (folded as the loop
    yields them: see ``folder`` there)."""
    folder = EventFolder()
    events = run_loop(
        agent,
        model,
        messages,
        ledger=ledger,
        thread_id=thread_id,
        previous_response_id=previous_response_id,
        ids=ids,
        exclusive=exclusive,
        state=state,
        folder=folder,
    )
    async for _ in events:
        pass
    return folder.result()
