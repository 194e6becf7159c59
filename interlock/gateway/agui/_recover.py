"""Steps a run left open get their terminal results — recorded ones, or ``interrupted``.

A run saves its thread (a checkpoint) before the first tool of each batch runs, so after
a crash, a cancel or a lost client the thread may hold calls without results. Only the
holder of the thread's lease (:mod:`._lease`) looks, so no other run is executing them,
and the journal tells what became of each call, which is never run again:

- ``completed``: its recorded result (the tool finished; the save after it did not);
- ``started``: it was interrupted mid-execution → an ``interrupted`` result, journaled —
  unless its tool is declared ``on_interrupt="retry"`` (idempotent): when a run stops
  without its client asking (the client left, or the gateway drains) such a call is left
  open (:func:`retry_later`), and the next run on the thread, like the first run after a
  crash, runs it once more and uses its result (``retry_interrupted``). A run the client
  cancels reports it ``interrupted`` like any tool: the user asked for the work to stop;
- no entry, not held for a decision: it never started → an ``interrupted`` result too;
- held for approval or a client's result, or awaiting input: still pending, left alone.

The results become one tool message appended to the thread: the model sees each call
with its result, the frontend sees it in the snapshot, and the thread goes on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from interlock.core_loop import (
    Agent,
    AgentState,
    LedgerStore,
    LoopEvent,
    ModelUpdate,
    RunFinished,
    fold_events,
    random_ids,
    retries_when_interrupted,
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


async def retry_later(
    messages: Sequence[Message], ledger: LedgerStore, thread_id: str, agent: Agent
) -> set[str]:
    """Occurrence ids of the open calls interrupted mid-execution whose tool is declared
    ``on_interrupt="retry"``: a run that stops without its client asking leaves them open
    for the next run to run once more (module docstring)."""
    kept: set[str] = set()
    for call in open_calls(messages):
        if not retries_when_interrupted(agent, call.name):
            continue
        entry = await ledger.execution(thread_id, call.occurrence_id or "")
        if entry is not None and entry.state == "started":
            kept.add(call.occurrence_id or "")
    return kept


async def close_open_calls(
    messages: Sequence[Message],
    ledger: LedgerStore,
    thread_id: str,
    retry: tuple[Agent, AgentState] | None = None,
    *,
    leave_open: Collection[str] = (),
) -> Message | None:
    """The tool message closing every call left open by a run that stopped (see module
    docstring), but those in ``leave_open`` (occurrence ids); ``None`` when nothing is
    closed. Call only while holding the thread's lease.

    With ``retry`` (the agent and the state its tools see), an interrupted call whose tool
    is declared ``on_interrupt="retry"`` runs once more instead of being reported."""
    pending = [call for call in open_calls(messages) if call.occurrence_id not in leave_open]
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


async def settle_stopped(
    messages: Sequence[Message],
    produced: tuple[Message, ...],
    ledger: LedgerStore,
    thread_id: str,
    retrying: Agent | None,
) -> tuple[Message, ...]:
    """The steps a run that stopped early produced after ``messages``, every call closed:
    a recorded result, or ``interrupted`` (the run's loop is closed, so nothing of it still
    executes) — but with ``retrying`` (the run's agent; ``None`` when the client asked to
    stop) a retry tool it cut off is left open for the next run (:func:`retry_later`)."""
    everything = [*messages, *produced]
    kept: set[str] = set()
    if retrying is not None:
        kept = await retry_later(everything, ledger, thread_id, retrying)
    closing = await close_open_calls(everything, ledger, thread_id, leave_open=kept)
    if closing is not None:
        produced = (*produced, closing)
    return consistent_prefix(produced, kept)


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


def consistent_prefix(
    messages: Sequence[Message], left_open: Collection[str] = ()
) -> tuple[Message, ...]:
    """The longest prefix in which every local or client tool call has its result (or is
    in ``left_open``: occurrence ids the next run settles, see :func:`retry_later`)."""
    unanswered: set[str] = set()
    best = 0
    for position, message in enumerate(messages, start=1):
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.owner != "hosted":
                if part.occurrence_id not in left_open:
                    unanswered.add(part.occurrence_id or part.call_id)
            elif isinstance(part, ToolResultPart):
                unanswered.discard(part.occurrence_id or part.call_id)
        if not unanswered:
            best = position
    return tuple(messages[:best])
