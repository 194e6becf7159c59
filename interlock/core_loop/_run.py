"""The function-calling loop, written once as an async generator of :mod:`._events`.

One run: validate and claim the caller's decisions against the ledger, settle the held
batches they complete, then call the model until it answers without local calls, the run
pauses, or a limit forces one final call with tools disabled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace

from interlock.core_loop._agent import (
    Agent,
    IdSource,
    ModelStreamError,
    random_ids,
)
from interlock.core_loop._batch import BatchSettler, Pause
from interlock.core_loop._decisions import Resumption, claim_decisions
from interlock.core_loop._events import (
    LoopEvent,
    LoopResult,
    ModelUpdate,
    RunFinished,
    add_usage,
    fold_event_stream,
)
from interlock.core_loop._history import project_history
from interlock.core_loop._ledger import Budget, LedgerStore
from interlock.core_loop._model import ChatModel
from interlock.core_loop._tools import Tool
from interlock.transcript import (
    ApprovalRequestPart,
    Continuation,
    JsonValue,
    Message,
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
    ToolSpec,
    Update,
    Usage,
    response_to_updates,
)

_VISIBLE = ("text", "refusal", "media", "json")


class Run(BatchSettler):
    """The state of one run. Use :func:`run_loop` / :func:`run_agent`."""

    def __init__(
        self,
        agent: Agent,
        model: ChatModel,
        messages: Sequence[Message],
        *,
        ledger: LedgerStore,
        thread_id: str,
        previous_response_id: str | None,
        ids: IdSource,
    ) -> None:
        self.agent = agent
        self.model = model
        self.input = tuple(messages)
        self.ledger = ledger
        self.thread_id = thread_id
        self.ids = ids
        self.tools: Mapping[str, Tool] = {tool.name: tool for tool in agent.tools}
        self.specs: tuple[ToolSpec, ...] = tuple(tool.spec for tool in agent.tools)
        self.budget = Budget()
        self.known_results: dict[str, ToolResultPart] = {}
        self.answers: dict[str, JsonValue] = {}
        self.pause: Pause | None = None
        self.settled: list[Message] = []
        self.history: list[Message] = []
        self.unsent: list[Message] = []
        self.response_id = previous_response_id if agent.service_state else None
        self.usage = Usage()
        self.calls_made = 0
        self.limit_reason: str | None = None

    async def events(self) -> AsyncIterator[LoopEvent]:
        """The run's events; the last one is always :class:`RunFinished`."""
        resumption = await claim_decisions(self, self.input, self.response_id is not None)
        self.known_results = resumption.known_results
        self.answers = resumption.answers
        self.budget = await self.ledger.budget(self.thread_id) if resumption.batches else Budget()
        self.calls_made = self.budget.iterations
        for batch in resumption.batches:
            async for event in self.settle(batch, resumption.records):
                yield event
            if self.pause is not None:
                yield await self._finish(self.pause)
                return
            self._check_limits()
        self._start_history(resumption)
        while True:
            if (
                self.limit_reason is None
                and self.budget.iterations >= self.agent.limits.max_iterations
            ):
                self.limit_reason = "max_iterations"
            async for event in self._turn():
                yield event
            if self.pause is not None:
                yield await self._finish(self.pause)
                return

    def _start_history(self, resumption: Resumption) -> None:
        assigned = resumption.messages
        current = resumption.current_from
        if self.response_id is not None:
            trailing = project_history(assigned[current:], current_from=0)
            self.unsent = [*self.settled, *trailing]
        self.history = list(project_history([*assigned, *self.settled], current_from=current))
        self.settled.clear()

    def _check_limits(self) -> None:
        limits = self.agent.limits
        if (
            limits.max_function_calls is not None
            and self.budget.function_calls >= limits.max_function_calls
        ):
            self.limit_reason = self.limit_reason or "max_function_calls"
        errors = limits.max_consecutive_errors
        if errors is not None and self.budget.consecutive_errors >= errors:
            self.limit_reason = self.limit_reason or "max_consecutive_errors"

    async def _turn(self) -> AsyncIterator[LoopEvent]:
        """One model call and what follows from it."""
        tools_enabled = self.limit_reason is None
        builder = ResponseBuilder()
        message_id = self.ids("msg")
        async for event in self._call_model(builder, message_id, tools_enabled):
            yield event
        response = builder.build()
        message = replace(response.message, id=message_id)
        self.usage = add_usage(self.usage, response.usage)
        self.history.append(message)
        self.unsent = []
        if self.agent.service_state and response.id is not None:
            self.response_id = response.id
        if not tools_enabled:
            for event in self._fallback(message):
                yield event
            self.pause = Pause(outcome="limit", reason=self.limit_reason)
            return
        calls = tuple(
            part
            for part in message.parts
            if isinstance(part, ToolCallPart) and part.owner != "hosted"
        )
        if not calls:
            self.pause = self._answered(message)
            return
        async for event in self.start_batch(calls):
            yield event
        if self.pause is None:
            self.history.extend(self.settled)
            self.unsent.extend(self.settled)
            self.settled.clear()
            self._check_limits()

    def _answered(self, message: Message) -> Pause:
        hosted = tuple(
            part
            for part in message.parts
            if isinstance(part, ApprovalRequestPart) and part.call.owner == "hosted"
        )
        if hosted:
            return Pause(outcome="awaiting_approval", approvals=hosted)
        return Pause(outcome="final")

    def _request(self, tools_enabled: bool) -> Request:
        continuing = self.response_id is not None
        if continuing:
            messages: Sequence[Message] = self.unsent
        elif self.agent.compaction is not None:
            messages = self.agent.compaction(self.history)
        else:
            messages = self.history
        if self.agent.instructions:
            system = Message(role="system", parts=(TextPart(text=self.agent.instructions),))
            messages = [system, *messages]
        continuation = (
            Continuation(store=True, previous_response_id=self.response_id)
            if self.agent.service_state
            else Continuation()
        )
        return Request(
            model=self.agent.model,
            messages=tuple(messages),
            tools=self.specs,
            hosted_tools=self.agent.hosted_tools,
            tool_choice=None if tools_enabled else ToolChoice(mode="none"),
            options=self.agent.options,
            continuation=continuation,
        )

    async def _call_model(
        self, builder: ResponseBuilder, message_id: str, tools_enabled: bool
    ) -> AsyncIterator[LoopEvent]:
        request = self._request(tools_enabled)
        if tools_enabled:
            budget = self.budget
            self.budget = Budget(
                iterations=budget.iterations + 1,
                function_calls=budget.function_calls,
                consecutive_errors=budget.consecutive_errors,
            )
        self.calls_made += 1
        occurrences: dict[int, ToolCallPart] = {}
        dropped: set[int] = set()
        stream = self.model.stream(request)
        try:
            async for raw in stream:
                update = self._assign(raw, occurrences)
                if not tools_enabled and _actionable(update, dropped):
                    continue
                builder.add(update)
                yield ModelUpdate(iteration=self.calls_made, message_id=message_id, update=update)
                if isinstance(update, StreamFailed):
                    await self.ledger.save_budget(self.thread_id, self.budget)
                    raise ModelStreamError(update.code, update.message, update.status)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    def _assign(self, update: Update, occurrences: dict[int, ToolCallPart]) -> Update:
        """Give streamed local calls their occurrence id and owner before anyone sees them.

        The assigned part is remembered per index, so a finished part that is the started
        one (or equal to it) is not rebuilt.
        """
        if not isinstance(update, PartStarted | PartFinished):
            return update
        part = update.part
        if not isinstance(part, ToolCallPart) or part.owner == "hosted":
            return update
        known = occurrences.get(update.index)
        if known is not None and known.occurrence_id == part.occurrence_id and known == part:
            return update
        occurrence = (
            (known.occurrence_id if known else None) or part.occurrence_id or self.ids("occ")
        )
        tool = self.tools.get(part.name)
        owner = "client" if tool is not None and tool.client_owned else part.owner
        if part.occurrence_id != occurrence or part.owner != owner:
            part = replace(part, occurrence_id=occurrence, owner=owner)
        occurrences[update.index] = part
        if isinstance(update, PartStarted):
            return PartStarted(index=update.index, part=part)
        return PartFinished(index=update.index, part=part)

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

    async def _finish(self, pause: Pause) -> RunFinished:
        await self.ledger.save_budget(self.thread_id, self.budget)
        stopped = pause.outcome in ("limit", "terminated")
        return RunFinished(
            outcome=pause.outcome,
            usage=self.usage,
            response_id=None if stopped else self.response_id,
            iterations=self.budget.iterations,
            function_calls=self.budget.function_calls,
            reason=pause.reason,
            pending_approvals=pause.approvals,
            pending_inputs=pause.inputs,
            pending_calls=pause.calls,
        )


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


def run_loop(
    agent: Agent,
    model: ChatModel,
    messages: Sequence[Message],
    *,
    ledger: LedgerStore,
    thread_id: str,
    previous_response_id: str | None = None,
    ids: IdSource = random_ids,
) -> AsyncIterator[LoopEvent]:
    """Run the loop over ``messages`` (the thread's transcript plus the new input).

    Yields :mod:`loop events <interlock.core_loop._events>`; the last is ``RunFinished``.
    Decisions (approval responses, input answers, client results) are taken from the
    messages after the last assistant message. A decision that does not match live ledger
    state raises :class:`DecisionRefusedError` before anything runs. ``messages`` is never
    modified. Cancelling the consuming task cancels the model stream and running tools.
    """
    run = Run(
        agent,
        model,
        messages,
        ledger=ledger,
        thread_id=thread_id,
        previous_response_id=previous_response_id,
        ids=ids,
    )
    return run.events()


async def run_agent(
    agent: Agent,
    model: ChatModel,
    messages: Sequence[Message],
    *,
    ledger: LedgerStore,
    thread_id: str,
    previous_response_id: str | None = None,
    ids: IdSource = random_ids,
) -> LoopResult:
    """The non-streaming API: the fold of :func:`run_loop`'s events."""
    return await fold_event_stream(
        run_loop(
            agent,
            model,
            messages,
            ledger=ledger,
            thread_id=thread_id,
            previous_response_id=previous_response_id,
            ids=ids,
        )
    )
