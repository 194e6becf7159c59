"""Steps a run left open get their terminal results — recorded ones, or ``interrupted``.

A run saves its thread (a checkpoint) before the first tool of each batch runs, so after
a crash, a cancel or a lost client the thread may hold calls without results. Only the
holder of the thread's lease (:mod:`._lease`) looks, so no other run is executing them,
and the journal tells what became of each call, which is never run again:

- ``completed``: its recorded result (the tool finished; the save after it did not);
- ``started``: it was interrupted mid-execution → an ``interrupted`` result, journaled —
  or, when recovering after a crash and its tool is declared ``on_interrupt="retry"``
  (idempotent), it runs once more and its result is used (``retry_interrupted``);
- no entry, not held for a decision: it never started → an ``interrupted`` result too;
- held for approval or a client's result, or awaiting input: still pending, left alone.

The results become one tool message appended to the thread: the model sees each call
with its result, the frontend sees it in the snapshot, and the thread goes on.
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.core_loop import (
    Agent,
    AgentState,
    LedgerStore,
    LoopEvent,
    ModelUpdate,
    RunFinished,
    fold_events,
    random_ids,
    retry_interrupted,
)
from interlock.transcript import (
    Message,
    ResponseFinished,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

INTERRUPTED_TEXT = (
    "Interrupted: the run executing this call ended before the tool reported a result; "
    "it was not run again."
)
NOT_STARTED_TEXT = "Not executed: the run ended before this call started."


def _interrupted(call: ToolCallPart, text: str) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.call_id,
        occurrence_id=call.occurrence_id,
        name=call.name,
        output=(TextPart(text=text),),
        outcome="interrupted",
    )


def open_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """Local and client calls (with occurrence ids) that no result answers, in order."""
    calls: dict[str, ToolCallPart] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.owner != "hosted" and part.occurrence_id:
                calls[part.occurrence_id] = part
            elif isinstance(part, ToolResultPart) and part.occurrence_id:
                calls.pop(part.occurrence_id, None)
    return list(calls.values())


async def close_open_calls(
    messages: Sequence[Message],
    ledger: LedgerStore,
    thread_id: str,
    retry: tuple[Agent, AgentState] | None = None,
) -> Message | None:
    """The tool message closing every call left open by a run that stopped (see module
    docstring); ``None`` when nothing is open. Call only while holding the thread's lease.

    With ``retry`` (the agent and the state its tools see), an interrupted call whose tool
    is declared ``on_interrupt="retry"`` runs once more instead of being reported."""
    pending = open_calls(messages)
    if not pending:
        return None
    held = {
        item.occurrence_id for batch in await ledger.held_batches(thread_id) for item in batch.calls
    }
    results: list[ToolResultPart] = []
    for call in pending:
        occurrence = call.occurrence_id or ""
        entry = await ledger.execution(thread_id, occurrence)
        if entry is None and occurrence in held:
            continue  # awaiting a decision or a client's result
        if entry is not None and entry.state == "awaiting_input":
            continue
        if entry is not None and entry.result is not None:
            results.append(entry.result)
            continue
        if entry is not None and retry is not None:
            agent, state = retry
            retried = await retry_interrupted(
                agent, call, ledger=ledger, thread_id=thread_id, state=state
            )
            if retried is not None:
                results.append(retried)
                continue
        text = NOT_STARTED_TEXT if entry is None else INTERRUPTED_TEXT
        result = _interrupted(call, text)
        await ledger.complete_execution(thread_id, occurrence, result)
        results.append(result)
    if not results:
        return None
    return Message(role="tool", parts=tuple(results), id=random_ids("msg"))


def fold_partial(events: Sequence[LoopEvent]) -> tuple[Message, ...]:
    """The messages of a run so far (or stopped early), without its unfinished model step."""
    unfinished: set[str] = set()
    for event in events:
        if isinstance(event, ModelUpdate):
            if isinstance(event.update, ResponseFinished):
                unfinished.discard(event.message_id)
            else:
                unfinished.add(event.message_id)
    kept = [
        event
        for event in events
        if not (isinstance(event, ModelUpdate) and event.message_id in unfinished)
        and not isinstance(event, RunFinished)
    ]
    return fold_events([*kept, RunFinished(outcome="terminated")]).messages


def consistent_prefix(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The longest prefix in which every local or client tool call has its result."""
    unanswered: set[str] = set()
    best = 0
    for position, message in enumerate(messages, start=1):
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.owner != "hosted":
                unanswered.add(part.occurrence_id or part.call_id)
            elif isinstance(part, ToolResultPart):
                unanswered.discard(part.occurrence_id or part.call_id)
        if not unanswered:
            best = position
    return tuple(messages[:best])
