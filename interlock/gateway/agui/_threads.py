"""Server-owned threads: reconciling a client's ``RunAgentInput`` against the stored thread.

The thread in the store (history, state, pending interrupts) is the authority; the
client's ``messages`` are a proposal. :func:`reconcile` decides what one run starts from:

- a message whose id the thread already holds is the server's version (client edits to
  it have no effect): the ids of stored messages, the streamed ids recorded with their
  parts, and ids derived from them (``<message id>:{a|r|s|t}<n>``) all count as held, so
  a client that kept the streamed events instead of the final snapshot continues;
- a new ``user``/``system``/``developer`` message is accepted; ``system``/``developer``
  ones become ``user`` messages (the browser's words, not instructions) unless the agent
  trusts client instructions;
- a new ``tool`` message is accepted only as the answer to a frontend tool call the
  server issued and nobody answered yet; a new ``assistant`` message is never accepted
  (``FORGED_HISTORY``);
- pending interrupts must be answered all at once (``resume[]`` for interrupts, a tool
  message per ``confirm_changes`` call) and nothing else may be answered; a repeat of an
  answer already applied, with the same decision, is an idempotent no-op;
- a ``confirm_changes`` answer that echoes the call must echo the recorded call;
- an approval may not carry edited arguments for a tool whose edits are forbidden.

A run with nothing new to act on replays the thread (snapshot) without calling the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from interlock.codecs.agui import (
    DIALECT,
    RunInput,
    approval_interrupt_id,
    confirm_changes_call_id,
    derived_base,
    held_message_ids,
    input_interrupt_id,
)
from interlock.core_loop import ApprovalRecord, LedgerStore, arguments_digest
from interlock.gateway.config import ApprovalStyle
from interlock.gateway.stores import ThreadRecord
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonValue,
    Message,
    Part,
    ToolCallPart,
    ToolResultPart,
)


class RunRefusedError(Exception):
    """The run cannot start; ``code`` is the ``RUN_ERROR`` code. Nothing was changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What a run starts from.

    ``accepted`` are the client's new messages (plus one control message carrying the
    ``resume[]`` decisions), in order; the loop runs over ``thread.messages + accepted``.
    ``replay`` is true when there is nothing new to act on: the run only re-sends the
    thread's snapshot (a repeated resume or tool answer, or a hydration request).
    ``decisions`` counts the pending interrupts and ``confirm_changes`` calls the input
    answers (repeats of applied answers not counted).
    """

    accepted: tuple[Message, ...]
    replay: bool
    decisions: int = 0


def interrupt_entries(
    approvals: Sequence[ApprovalRequestPart],
    inputs: Sequence[InputRequestPart],
    style: ApprovalStyle,
) -> tuple[JsonObject, ...]:
    """The pending-interrupt records a paused run leaves on its thread."""
    entries: list[JsonObject] = []
    for request in approvals:
        if style == "interrupt":
            entry_id = approval_interrupt_id(request.approval_id)
        else:
            entry_id = confirm_changes_call_id(request.approval_id)
        entries.append({"id": entry_id, "reason": "tool_call", "toolCallId": request.call.call_id})
    for request in inputs:
        entries.append(
            {
                "id": input_interrupt_id(request.request_id),
                "reason": "input_required",
                "toolCallId": request.call_id,
            }
        )
    return tuple(entries)


def _is_held(message_id: str | None, held: set[str]) -> bool:
    if message_id is None:
        return False
    if message_id in held:
        return True
    base = derived_base(message_id)
    return base is not None and base in held


def open_client_calls(messages: Sequence[Message]) -> dict[str, ToolCallPart]:
    """Frontend tool calls of the thread that no tool message answered yet, by call id."""
    open_calls: dict[str, ToolCallPart] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.owner == "client":
                open_calls[part.call_id] = part
            elif isinstance(part, ToolResultPart):
                open_calls.pop(part.call_id, None)
    return open_calls


def _answered_inputs(messages: Sequence[Message]) -> dict[str, JsonValue]:
    return {
        part.request_id: part.value
        for message in messages
        for part in message.parts
        if isinstance(part, InputResponsePart)
    }


class _Reconciler:
    """One reconciliation; see :func:`reconcile`."""

    def __init__(
        self,
        thread: ThreadRecord,
        run_input: RunInput,
        ledger: LedgerStore,
        thread_id: str,
        policy: tuple[frozenset[str], bool] = (frozenset(), False),
    ) -> None:
        self.fixed_tools, self.trust_instructions = policy
        self.thread = thread
        self.run_input = run_input
        self.ledger = ledger
        self.thread_id = thread_id
        self.pending = {str(entry.get("id")): entry for entry in thread.pending_interrupts}

    async def plan(self) -> Plan:
        held = held_message_ids(self.thread.messages)
        fresh = [message for message in self.run_input.messages if not _is_held(message.id, held)]
        open_calls = open_client_calls(self.thread.messages)
        answered: set[str] = set()
        accepted: list[Message] = []
        for message in fresh:
            kept = await self._check_message(message, open_calls, answered)
            if kept is not None:
                accepted.append(kept)
        decisions = await self._resume(answered)
        if decisions is not None:
            accepted.append(decisions)
        missing = sorted(set(self.pending) - answered)
        if missing:
            raise RunRefusedError(
                "INTERRUPT_NOT_ADDRESSED",
                f"the thread has pending interrupts not answered by this input: {', '.join(missing)}",
            )
        unanswered = sorted(set(open_calls) - answered)
        if unanswered and accepted and not self.pending:
            raise RunRefusedError(
                "TOOL_RESULT_MISSING",
                "frontend tool calls are waiting for their results: " + ", ".join(unanswered),
            )
        decided = len(answered & set(self.pending))
        return Plan(accepted=tuple(accepted), replay=not accepted, decisions=decided)

    async def _check_message(
        self, message: Message, open_calls: dict[str, ToolCallPart], answered: set[str]
    ) -> Message | None:
        """The message to accept, ``None`` for a repeat of an applied answer; or refuse."""
        match message.role:
            case "assistant":
                raise RunRefusedError(
                    "FORGED_HISTORY",
                    f"assistant message {message.id!r} was never issued on this thread",
                )
            case "tool":
                for part in message.parts:
                    if not isinstance(part, ToolResultPart) or part.call_id not in open_calls:
                        call_id = part.call_id if isinstance(part, ToolResultPart) else "?"
                        raise RunRefusedError(
                            "FORGED_HISTORY",
                            f"tool message {message.id!r} answers no open frontend call "
                            f"(toolCallId {call_id!r})",
                        )
                    answered.add(part.call_id)
                return message
            case "user" | "system" | "developer":
                answers = [p for p in message.parts if isinstance(p, ApprovalResponsePart)]
                if not answers:
                    if message.role == "user" or self.trust_instructions:
                        return message
                    return replace(message, role="user")
                fresh = [answer for answer in answers if not await self._confirm_repeat(answer)]
                for answer in fresh:
                    await self._check_confirmation(answer)
                    answered.add(confirm_changes_call_id(answer.approval_id))
                return message if fresh else None

    async def _confirm_repeat(self, answer: ApprovalResponsePart) -> bool:
        """True for a ``confirm_changes`` answer already applied with the same decision."""
        if confirm_changes_call_id(answer.approval_id) in self.pending:
            return False
        record = await self.ledger.approval(self.thread_id, answer.approval_id)
        if record is None or record.live:
            raise RunRefusedError(
                "UNKNOWN_INTERRUPT",
                f"no confirmation {confirm_changes_call_id(answer.approval_id)!r} is pending",
            )
        _same_decision(record, answer)
        return True

    async def _check_confirmation(self, answer: ApprovalResponsePart) -> None:
        """An echoed function name, call id or arguments must be the recorded ones."""
        record = await self.ledger.approval(self.thread_id, answer.approval_id)
        if record is None:
            raise RunRefusedError("UNKNOWN_INTERRUPT", f"unknown approval {answer.approval_id!r}")
        payload = answer.extra.get(DIALECT, {}).get("payload")
        echoed: JsonObject = payload if isinstance(payload, dict) else {}
        name, call_id = echoed.get("function_name"), echoed.get("function_call_id")
        tampered = (name is not None and name != record.tool_name) or (
            call_id is not None and call_id != record.call.call_id
        )
        if "function_arguments" in echoed:
            arguments = echoed["function_arguments"]
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            tampered = tampered or arguments_digest(text) != record.arguments_digest
        if tampered:
            raise RunRefusedError(
                "APPROVAL_TAMPERED",
                f"the confirm_changes answer for {answer.approval_id!r} names another call",
            )

    async def _resume(self, answered: set[str]) -> Message | None:
        """The control message carrying ``resume[]`` decisions (``None``: nothing new)."""
        parts: list[Part] = []
        for part in self.run_input.resume:
            interrupt_id = _interrupt_id(part)
            await self._check_edit(part)
            if interrupt_id in self.pending:
                parts.append(part)
                answered.add(interrupt_id)
            else:
                await self._resume_repeat(part, interrupt_id)
        if not parts:
            return None
        return Message(role="user", parts=tuple(parts), id=f"{self.run_input.run_id}:resume")

    async def _check_edit(self, part: ApprovalResponsePart | InputResponsePart) -> None:
        if not isinstance(part, ApprovalResponsePart) or part.edited_arguments is None:
            return
        record = await self.ledger.approval(self.thread_id, part.approval_id)
        if record is not None and record.tool_name in self.fixed_tools:
            raise RunRefusedError(
                "EDIT_NOT_ALLOWED", f"the arguments of {record.tool_name} may not be edited"
            )

    async def _resume_repeat(
        self, part: ApprovalResponsePart | InputResponsePart, interrupt_id: str
    ) -> None:
        """Accept a repeat of an applied answer (same decision); refuse anything else."""
        if isinstance(part, InputResponsePart):
            earlier = _answered_inputs(self.thread.messages)
            if part.request_id not in earlier:
                raise RunRefusedError("UNKNOWN_INTERRUPT", f"no interrupt {interrupt_id!r}")
            if earlier[part.request_id] != part.value:
                raise RunRefusedError(
                    "INTERRUPT_ALREADY_RESOLVED",
                    f"interrupt {interrupt_id!r} was already answered differently",
                )
            return
        record = await self.ledger.approval(self.thread_id, part.approval_id)
        if record is None or record.live:
            raise RunRefusedError("UNKNOWN_INTERRUPT", f"no interrupt {interrupt_id!r}")
        _same_decision(record, part)


def _interrupt_id(part: ApprovalResponsePart | InputResponsePart) -> str:
    if isinstance(part, InputResponsePart):
        return input_interrupt_id(part.request_id)
    return approval_interrupt_id(part.approval_id)


def _canonical(arguments: str | None) -> str | None:
    return None if arguments is None else arguments_digest(arguments)


def _same_decision(record: ApprovalRecord, answer: ApprovalResponsePart) -> None:
    decision = record.decision
    assert decision is not None
    same = decision.approved == answer.approved and _canonical(
        decision.edited_arguments
    ) == _canonical(answer.edited_arguments)
    if not same:
        raise RunRefusedError(
            "INTERRUPT_ALREADY_RESOLVED",
            f"approval {record.approval_id!r} was already decided differently",
        )


async def reconcile(
    thread: ThreadRecord,
    run_input: RunInput,
    ledger: LedgerStore,
    thread_id: str,
    *,
    fixed_tools: frozenset[str] = frozenset(),
    trust_instructions: bool = False,
) -> Plan:
    """What the run starts from (module docstring); raises :class:`RunRefusedError`.

    ``fixed_tools``: tools whose approvals may not edit arguments; ``trust_instructions``:
    keep a client's ``system``/``developer`` messages as instructions.
    """
    policy = (fixed_tools, trust_instructions)
    return await _Reconciler(thread, run_input, ledger, thread_id, policy).plan()
