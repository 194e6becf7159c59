"""Running an interrupted execution once more, for tools declared ``on_interrupt="retry"``.

An execution journaled ``started`` that never recorded a result was interrupted (a
crash, a cancel). By default it is reported as ``interrupted`` and never runs again. A
tool whose effect is idempotent may declare ``on_interrupt="retry"``: whoever finds the
interrupted execution while no other run can be executing it (the loop in an exclusive
run, the gateway's recovery under the thread lease) moves its journal entry from
``started`` to ``retrying`` (compare-and-set, so only one does) and runs the recorded
call once more — with the approved edits and approval record when it was approved. A
``retrying`` entry that never completes is reported like any interrupted one: a tool is
retried at most once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from interlock.core_loop._agent import Agent
from interlock.core_loop._execute import execute
from interlock.core_loop._ledger import ApprovalRecord, LedgerStore
from interlock.core_loop._state import AgentState
from interlock.core_loop._tools import Tool, ToolSet, make_result
from interlock.transcript import ToolCallPart, ToolResultPart

ASKED_ON_RETRY = (
    "Interrupted: the tool was run again after an interruption and asked for input; "
    "it was not completed."
)


def retry_tool(tools: Mapping[str, Tool], name: str) -> Tool | None:
    """The local tool called ``name`` if its policy is ``retry``."""
    found = tools.get(name)
    if found is None or found.client_owned or found.on_interrupt != "retry":
        return None
    return found


def retries_when_interrupted(agent: Agent, name: str) -> bool:
    """Whether ``agent``'s local tool ``name`` is declared ``on_interrupt="retry"``."""
    return retry_tool(ToolSet(agent.tools).by_name, name) is not None


async def approved_call(
    ledger: LedgerStore, thread_id: str, call: ToolCallPart
) -> tuple[ToolCallPart, ApprovalRecord | None]:
    """The call as it was approved (edited arguments applied) and its approval record,
    when a held batch shows it needed one."""
    occurrence = call.occurrence_id
    for batch in await ledger.held_batches(thread_id):
        for item in batch.calls:
            if item.occurrence_id != occurrence or item.approval_id is None:
                continue
            record = await ledger.approval(thread_id, item.approval_id)
            decision = None if record is None else record.decision
            if decision is not None and decision.edited_arguments is not None:
                call = replace(call, arguments=decision.edited_arguments)
            return call, record
    return call, None


async def retry_interrupted(
    agent: Agent,
    call: ToolCallPart,
    *,
    ledger: LedgerStore,
    thread_id: str,
    state: AgentState | None = None,
) -> ToolResultPart | None:
    """Run an interrupted ``call`` once more if its tool says ``on_interrupt="retry"``
    and the journal moves from ``started`` to ``retrying``; its journaled result, else
    ``None`` (report it as interrupted). Call only when no other run can be executing it."""
    toolset = ToolSet(agent.tools, state)
    tool = retry_tool(toolset.by_name, call.name)
    occurrence = call.occurrence_id or ""
    if tool is None or not await ledger.retry_execution(thread_id, occurrence):
        return None
    call, record = await approved_call(ledger, thread_id, call)
    execution = await execute(
        tool,
        call,
        thread_id=thread_id,
        middleware=agent.middleware,
        approval=record,
        detailed_errors=agent.detailed_errors,
        toolset=toolset,
    )
    result = execution.result or make_result(call, ASKED_ON_RETRY, "interrupted")
    await ledger.complete_execution(thread_id, occurrence, result)
    return result
