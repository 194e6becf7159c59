"""Batches: classify the whole batch, hold it for decisions, then settle it atomically.

A batch is every local/client call of one model response. It is classified before
anything runs (independent of order). If any call needs a human decision the batch is held
and nothing in it runs until every decision is in. Settling runs each call at most once
(journal compare-and-set), emits results in model order, and ends the run when a tool asks
for input, middleware terminates, or client-owned calls remain.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from interlock.core_loop._agent import Agent, IdSource
from interlock.core_loop._events import (
    ApprovalRequested,
    ClientCallsPending,
    InputRequested,
    LoopEvent,
    ToolFinished,
    ToolStarted,
)
from interlock.core_loop._execute import Execution, execute
from interlock.core_loop._ledger import (
    ApprovalRecord,
    ApprovalRule,
    Budget,
    Disposition,
    HeldBatch,
    JournalEntry,
    LedgerStore,
    PlannedCall,
    arguments_digest,
)
from interlock.core_loop._retry import retry_tool
from interlock.core_loop._step import (
    AwaitingApproval,
    AwaitingClient,
    AwaitingInput,
    Step,
    Terminated,
)
from interlock.core_loop._tools import ToolSet, make_result
from interlock.transcript import (
    ApprovalRequestPart,
    InputRequestPart,
    JsonValue,
    Message,
    ToolCallPart,
    ToolResultPart,
)

UNKNOWN_TOOL = "Error: there is no tool named {name!r}."
DENIED = "The user rejected this call; it was not executed."
LIMIT_SKIPPED = "Not executed: the function-call limit ({limit}) was reached."
UNKNOWN_TERMINATED = (
    "Not executed: the run was terminated because the model called an unknown tool."
)
INDETERMINATE = "Not run again: an earlier execution started and never reported a result."


@dataclass(slots=True)
class Counters:
    """The run's live budget counters; :class:`Budget` is their stored, frozen form."""

    iterations: int = 0
    function_calls: int = 0
    consecutive_errors: int = 0

    @classmethod
    def of(cls, budget: Budget) -> Counters:
        """Counters continuing a stored budget."""
        return cls(budget.iterations, budget.function_calls, budget.consecutive_errors)

    def frozen(self) -> Budget:
        """The counters as a stored budget."""
        return Budget(
            iterations=self.iterations,
            function_calls=self.function_calls,
            consecutive_errors=self.consecutive_errors,
        )


@dataclass(slots=True, kw_only=True)
class _Slot:
    """One call of a batch while settling."""

    call: ToolCallPart
    result: ToolResultPart | None = None
    emit: bool = True
    work: Coroutine[Any, Any, Execution] | None = None
    task: asyncio.Task[Execution] | None = None
    waiting: tuple[InputRequestPart, ...] = ()
    client: bool = False


def _run_concurrently(slots: list[_Slot]) -> None:
    """Several calls run as tasks; a single call runs inline (no task, less overhead)."""
    running = [slot for slot in slots if slot.work is not None]
    if len(running) > 1:
        for slot in running:
            assert slot.work is not None
            slot.task = asyncio.ensure_future(slot.work)


def _stop(slots: list[_Slot]) -> None:
    """Cancel what is still running when settling ends early (cancellation, close)."""
    for slot in slots:
        if slot.task is not None:
            slot.task.cancel()
        elif slot.work is not None:
            slot.work.close()


class BatchSettler:
    """The batch half of a run. :class:`~interlock.core_loop._run.Run` supplies the state."""

    agent: Agent
    ledger: LedgerStore
    thread_id: str
    exclusive: bool
    ids: IdSource
    counters: Counters
    toolset: ToolSet
    known_results: dict[str, ToolResultPart]
    rules: tuple[ApprovalRule, ...] | None
    """The thread's standing approval rules, read once, when a call first needs them."""
    answers: dict[str, JsonValue]
    step: Step
    """How the current step ends; :class:`RunAgain` until something ends the run."""
    settled: list[Message]
    delivered: list[Message]
    response_id: str | None
    outbox: list[LoopEvent]
    """Events of steps that are plain coroutines; the run yields them after each step."""

    def classify(self, call: ToolCallPart) -> Disposition:
        """How one call is treated; depends only on the call, never on its position."""
        if not self.agent.invoke_functions:
            return "client"  # the caller executes every call
        tool = self.toolset.by_name.get(call.name)
        if tool is None:
            return "unknown"
        if tool.client_owned:
            return "client"
        if tool.needs_approval(call):
            auto = self.agent.auto_approve
            rules = self.rules or ()
            if (auto is not None and auto(call)) or any(rule.matches(call) for rule in rules):
                return "execute"
            return "approval"
        return "execute"

    async def _approved_by(
        self, item: PlannedCall
    ) -> ApprovalRule | Literal["auto_approve"] | None:
        """What let a call needing approval execute without a decision (see
        :class:`ToolStarted`): a standing rule matching it (rules only grow, so the one
        that matched still matches), else the agent's ``auto_approve`` (not called again)."""
        if item.approval_id is not None or not self._needs_approval(item.call):
            return None
        if self.rules is None:
            self.rules = await self.ledger.approval_rules(self.thread_id)
        rule = next((rule for rule in self.rules if rule.matches(item.call)), None)
        return rule if rule is not None else "auto_approve"

    def _needs_approval(self, call: ToolCallPart) -> bool:
        tool = self.toolset.by_name.get(call.name)
        return tool is not None and not tool.client_owned and tool.needs_approval(call)

    async def plan_batch(self, calls: tuple[ToolCallPart, ...]) -> HeldBatch | None:
        """Classify a fresh batch from the model; the batch if it can be settled now.

        Otherwise the batch is held for decisions (approval requests in the outbox) or,
        with ``terminate_on_unknown_calls``, refused whole.
        """
        if self.rules is None and any(self._needs_approval(call) for call in calls):
            self.rules = await self.ledger.approval_rules(self.thread_id)
        planned: list[PlannedCall] = []
        for call in calls:
            disposition = self.classify(call)
            approval_id = self.ids("approval") if disposition == "approval" else None
            planned.append(PlannedCall(call=call, disposition=disposition, approval_id=approval_id))
        batch = HeldBatch(batch_id=self.ids("batch"), calls=tuple(planned))
        if self.agent.limits.terminate_on_unknown_calls and any(
            item.disposition == "unknown" for item in planned
        ):
            await self._refuse_unknown(batch)
            return None
        records = [self._record(batch.batch_id, item) for item in planned if item.approval_id]
        if records:
            await self.ledger.hold_batch(self.thread_id, batch, records)
            self.outbox += self._surface_approvals(records)
            return None
        return batch

    def _record(self, batch_id: str, item: PlannedCall) -> ApprovalRecord:
        assert item.approval_id is not None
        return ApprovalRecord(
            approval_id=item.approval_id,
            batch_id=batch_id,
            occurrence_id=item.occurrence_id,
            tool_name=item.call.name,
            arguments_digest=arguments_digest(item.call.arguments),
            owner=item.call.owner,
            call=item.call,
            response_id=self.response_id,
        )

    def _surface_approvals(self, records: list[ApprovalRecord]) -> list[LoopEvent]:
        message_id = self.ids("msg")
        requests = tuple(
            ApprovalRequestPart(approval_id=record.approval_id, call=record.call)
            for record in records
        )
        self.step = AwaitingApproval(approvals=requests)
        return [ApprovalRequested(message_id=message_id, request=request) for request in requests]

    async def _refuse_unknown(self, batch: HeldBatch) -> None:
        message_id = self.ids("msg")
        for item in batch.calls:
            if item.disposition == "unknown":
                result = make_result(item.call, UNKNOWN_TOOL.format(name=item.call.name), "failed")
            else:
                result = make_result(item.call, UNKNOWN_TERMINATED, "interrupted")
            await self.ledger.complete_execution(self.thread_id, item.occurrence_id, result)
            self.outbox.append(ToolFinished(message_id=message_id, call=item.call, result=result))
        self.step = Terminated(reason="unknown_tool")

    async def replay(self, calls: tuple[ToolCallPart, ...], *, delivered: bool = False) -> None:
        """Re-surface the recorded results of a released batch; nothing runs.

        Used when a consumed approval is replayed identically (a retry after the model
        call that followed the execution failed). Results the caller's transcript lacks
        are emitted (outbox); all of them join the history the next model call sees —
        except, when ``delivered``, the new items sent under continuation (the service
        already holds them).
        """
        message_id = self.ids("msg")
        results: list[ToolResultPart] = []
        for call in calls:
            occurrence = call.occurrence_id or ""
            entry = await self.ledger.execution(self.thread_id, occurrence)
            known = self.known_results.get(occurrence)
            if entry is not None and entry.result is not None:
                if known is None:
                    self.outbox.append(
                        ToolFinished(message_id=message_id, call=call, result=entry.result)
                    )
                results.append(entry.result)
            elif known is not None:
                results.append(known)  # a client's own result, as the caller returned it
        if results:
            message = Message(role="tool", parts=tuple(results), id=message_id)
            (self.delivered if delivered else self.settled).append(message)

    async def settle(
        self, batch: HeldBatch, records: Mapping[str, ApprovalRecord], *, held: bool = True
    ) -> AsyncIterator[LoopEvent]:
        """Run a batch whose decisions are all in (or re-surface what is still undecided).

        ``held`` is False for a fresh batch that was never held (nothing to release).
        """
        undecided = [
            records[item.approval_id]
            for item in batch.calls
            if item.approval_id is not None and records[item.approval_id].live
        ]
        if undecided:
            for event in self._surface_approvals(undecided):
                yield event
            return
        message_id = self.ids("msg")
        slots: list[_Slot] = []
        try:
            for item in batch.calls:
                slot = await self._open(item, records)
                slots.append(slot)
                if slot.work is not None:
                    approved_by = await self._approved_by(item)
                    yield ToolStarted(
                        message_id=message_id, call=slot.call, approved_by=approved_by
                    )
            _run_concurrently(slots)
            terminate = False
            for slot in slots:
                terminate = await self._close(slot) or terminate
                if slot.result is not None and slot.emit:
                    yield ToolFinished(message_id=message_id, call=slot.call, result=slot.result)
        finally:
            _stop(slots)
        for event in await self._conclude(batch, slots, terminate, message_id, held):
            yield event

    async def _open(self, item: PlannedCall, records: Mapping[str, ApprovalRecord]) -> _Slot:
        """Decide one call's fate and start its execution if it runs now."""
        call, occurrence = item.call, item.occurrence_id
        entry = await self.ledger.execution(self.thread_id, occurrence)
        if entry is not None and entry.state == "completed":
            assert entry.result is not None
            return _Slot(call=call, result=entry.result, emit=occurrence not in self.known_results)
        if item.disposition == "client":
            known = self.known_results.get(occurrence)
            return _Slot(call=call, result=known, emit=False, client=known is None)
        if item.disposition == "unknown":
            text = UNKNOWN_TOOL.format(name=call.name)
            return await self._done(call, make_result(call, text, "failed"))
        record = records.get(item.approval_id) if item.approval_id else None
        if record is not None:
            decision = record.decision
            assert decision is not None
            if not decision.approved:
                text = DENIED if not decision.reason else f"{DENIED} Reason: {decision.reason}"
                return await self._done(call, make_result(call, text, "denied"))
            if decision.edited_arguments is not None:
                call = replace(call, arguments=decision.edited_arguments)
        answers: tuple[JsonValue, ...] = ()
        if entry is not None and entry.state == "awaiting_input":
            if any(request.request_id not in self.answers for request in entry.requests):
                return _Slot(call=call, waiting=entry.requests, emit=False)
            answers = tuple(self.answers[request.request_id] for request in entry.requests)
        elif entry is not None:
            retried = await self._retry(call, entry, record)
            if retried is not None:
                return retried
            return await self._done(call, make_result(call, INDETERMINATE, "interrupted"))
        return await self._begin(call, record, answers, resumed=entry is not None)

    async def _retry(
        self, call: ToolCallPart, entry: JournalEntry, record: ApprovalRecord | None
    ) -> _Slot | None:
        """An interrupted execution of a tool declared ``on_interrupt="retry"`` runs once
        more — only in an exclusive run, where no other run can be executing it."""
        tool = retry_tool(self.toolset.by_name, call.name)
        if not self.exclusive or entry.state != "started" or tool is None:
            return None
        if not await self.ledger.retry_execution(self.thread_id, call.occurrence_id or ""):
            return None
        work = execute(
            tool,
            call,
            thread_id=self.thread_id,
            middleware=self.agent.middleware,
            approval=record,
            detailed_errors=self.agent.detailed_errors,
            toolset=self.toolset,
        )
        return _Slot(call=call, work=work)

    async def _begin(
        self,
        call: ToolCallPart,
        record: ApprovalRecord | None,
        answers: tuple[JsonValue, ...],
        *,
        resumed: bool,
    ) -> _Slot:
        limit = self.agent.limits.max_function_calls
        if not resumed and limit is not None and self.counters.function_calls >= limit:
            return await self._done(
                call, make_result(call, LIMIT_SKIPPED.format(limit=limit), "interrupted")
            )
        occurrence = call.occurrence_id or ""
        if not await self.ledger.begin_execution(self.thread_id, occurrence):
            entry = await self.ledger.execution(self.thread_id, occurrence)
            if entry is not None and entry.result is not None:
                return _Slot(
                    call=call, result=entry.result, emit=occurrence not in self.known_results
                )
            return _Slot(call=call, result=make_result(call, INDETERMINATE, "interrupted"))
        if not resumed:
            self.counters.function_calls += 1
        tool = self.toolset.by_name.get(call.name)
        if tool is None:  # a held call whose tool this re-entry does not offer
            return await self._done(
                call, make_result(call, UNKNOWN_TOOL.format(name=call.name), "failed")
            )
        work = execute(
            tool,
            call,
            thread_id=self.thread_id,
            middleware=self.agent.middleware,
            answers=answers,
            approval=record,
            detailed_errors=self.agent.detailed_errors,
            toolset=self.toolset,
        )
        return _Slot(call=call, work=work)

    async def _done(self, call: ToolCallPart, result: ToolResultPart) -> _Slot:
        await self.ledger.complete_execution(self.thread_id, call.occurrence_id or "", result)
        return _Slot(call=call, result=result)

    async def _close(self, slot: _Slot) -> bool:
        """Wait for a running call and journal its outcome; True if it asks to terminate."""
        if slot.work is None:
            return False
        execution = await (slot.task if slot.task is not None else slot.work)
        slot.work = None
        occurrence = slot.call.occurrence_id or ""
        if execution.result is not None:
            slot.result = execution.result
            await self.ledger.complete_execution(self.thread_id, occurrence, execution.result)
            return execution.terminate
        slot.waiting = tuple(
            InputRequestPart(
                request_id=self.ids("input"),
                occurrence_id=occurrence,
                call_id=slot.call.call_id,
                prompt=question.prompt,
                response_schema=question.schema,
            )
            for question in execution.questions
        )
        await self.ledger.pause_execution(self.thread_id, occurrence, slot.waiting)
        return False

    async def _conclude(
        self, batch: HeldBatch, slots: list[_Slot], terminate: bool, message_id: str, held: bool
    ) -> list[LoopEvent]:
        """Count errors, then end the run (input, termination, client calls) or keep the
        batch's results for the next model call."""
        produced = [slot.result for slot in slots if slot.result is not None and slot.emit]
        if produced:
            failed = any(result.outcome == "failed" for result in produced)
            self.counters.consecutive_errors = self.counters.consecutive_errors + 1 if failed else 0
        waiting = tuple(request for slot in slots for request in slot.waiting)
        clients = tuple(slot.call for slot in slots if slot.client)
        if waiting and not terminate:
            await self.ledger.hold_batch(self.thread_id, batch, ())
            control_id = self.ids("msg")
            self.step = AwaitingInput(inputs=waiting)
            return [InputRequested(message_id=control_id, request=request) for request in waiting]
        if terminate:
            if held:
                await self.ledger.release_batch(self.thread_id, batch.batch_id)
            self.step = Terminated(reason="middleware")
            return []
        if clients:
            await self.ledger.hold_batch(self.thread_id, batch, ())
            self.step = AwaitingClient(calls=clients)
            return [ClientCallsPending(calls=clients)]
        if held:
            await self.ledger.release_batch(self.thread_id, batch.batch_id)
        results = tuple(slot.result for slot in slots if slot.result is not None)
        self.settled.append(Message(role="tool", parts=results, id=message_id))
        return []
