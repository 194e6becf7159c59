"""The caller's decisions, checked against the ledger before anything runs.

Decisions are read from the current input: the messages after the last assistant
message. Older history is never a source of authority (a resolved approval in it is
inert). Every approval decision must match a live record (known, not yet decided, and the
call the caller's transcript shows must be the recorded one); every input answer must
answer a request that is still waiting. All checks pass before the first claim.

One exception makes retries safe: a decision that repeats a consumed one *identically*
(same approval id, same approval, reason and edits) for an occurrence whose result is in
the journal is a replay. It claims nothing and runs nothing; the run continues with the
recorded results (see :class:`Resumption`). Any other decision on a consumed record is
refused as ``approval_consumed``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from interlock.core_loop._agent import DecisionRefusedError, IdSource
from interlock.core_loop._ledger import (
    ApprovalDecision,
    ApprovalRecord,
    ApprovalRule,
    HeldBatch,
    JournalEntry,
    LedgerStore,
    arguments_digest,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    InputResponsePart,
    JsonValue,
    Message,
    Part,
    ToolCallPart,
    ToolResultPart,
    assign_occurrences,
)


class _RunState(Protocol):
    ledger: LedgerStore
    thread_id: str
    ids: IdSource
    exclusive: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Resumption:
    """What a run starts from: the transcript with occurrence ids, and what it resumes.

    ``batches`` are held batches to settle; ``replays`` are the calls of released batches
    whose consumed approvals were replayed identically (their results are re-surfaced
    from the journal, never executed again), each in model order, with the service
    response id that made the calls (see :attr:`ApprovalRecord.response_id`).
    """

    messages: tuple[Message, ...]
    current_from: int
    batches: tuple[HeldBatch, ...]
    records: dict[str, ApprovalRecord]
    known_results: dict[str, ToolResultPart]
    answers: dict[str, JsonValue]
    replays: tuple[tuple[tuple[ToolCallPart, ...], str | None], ...] = ()


def _adopt(messages: Sequence[Message], held: Sequence[HeldBatch]) -> list[Message]:
    """Give wire-decoded calls (no occurrence id) of held batches their recorded ids.

    The latest calls with a held call id take the latest recorded occurrences.
    """
    recorded: defaultdict[str, list[str]] = defaultdict(list)
    for batch in held:
        for item in batch.calls:
            recorded[item.call.call_id].append(item.occurrence_id)
    out = list(messages)
    if not recorded:
        return out
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        parts: list[Part] = list(message.parts)
        changed = False
        for position in range(len(parts) - 1, -1, -1):
            part = parts[position]
            if (
                isinstance(part, ToolCallPart)
                and part.occurrence_id is None
                and recorded.get(part.call_id)
            ):
                parts[position] = replace(part, occurrence_id=recorded[part.call_id].pop())
                changed = True
        if changed:
            out[index] = replace(message, parts=tuple(parts))
    return out


def _current_from(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index + 1
    return 0


async def claim_decisions(
    run: _RunState, messages: Sequence[Message], continuing: bool
) -> Resumption:
    """Check every decision in the current input, claim them, and find the batches to settle.

    Raises :class:`DecisionRefusedError` (nothing claimed, nothing run) when a decision is
    unknown, already consumed, tampered with, or answers no waiting request. The transcript
    the run goes on with has no stand-in results (see :func:`without_stand_ins`).
    """
    held = await run.ledger.held_batches(run.thread_id)
    if not held and not _decides(messages):
        return _nothing_to_claim(run, messages)
    return await _claim(run, messages, continuing, held)


def _decides(messages: Sequence[Message]) -> bool:
    """Whether the current input holds an approval decision or an input answer."""
    return any(
        isinstance(part, (ApprovalResponsePart, InputResponsePart))
        for message in messages[_current_from(messages) :]
        for part in message.parts
    )


def _nothing_to_claim(run: _RunState, messages: Sequence[Message]) -> Resumption:
    """:func:`_claim` where no batch is held and the current input decides nothing (most
    runs): there is nothing to check, claim, settle or replay, and no stand-in to drop
    (no result is recorded for a batch). The same resumption, without the empty passes
    and store calls (``tests/core_loop/test_claim_fast_path.py`` compares the two)."""
    transcript = tuple(assign_occurrences(list(messages), mint=lambda: run.ids("occ")))
    return Resumption(
        messages=transcript,
        current_from=_current_from(transcript),
        batches=(),
        records={},
        known_results=_known_results(transcript),
        answers=_scan(transcript)[2],
    )


async def _claim(
    run: _RunState, messages: Sequence[Message], continuing: bool, held: tuple[HeldBatch, ...]
) -> Resumption:
    """:func:`claim_decisions` with the thread's held batches read."""
    entries = await _journal(run, held)
    assigned = assign_occurrences(_adopt(messages, held), mint=lambda: run.ids("occ"))
    trailing = [part for message in assigned[_current_from(assigned) :] for part in message.parts]
    calls, requests, answers = _scan(assigned)
    decisions = [
        part
        for part in trailing
        if isinstance(part, ApprovalResponsePart) and not _hosted_decision(part, requests)
    ]
    checked = [
        await _check_approval(run, decision, calls, requests, continuing) for decision in decisions
    ]
    _no_duplicates(decisions)
    waiting = _waiting_requests(held, entries)
    _check_answers(trailing, waiting)
    held_ids = {batch.batch_id for batch in held}
    replayed = [record for record, decision in checked if decision is None]
    touched = {record.batch_id for record in replayed if record.batch_id in held_ids}
    claims = {record.approval_id: decision for record, decision in checked if decision}
    claimed = await _claim_all(run, claims)
    touched.update(record.batch_id for record in claimed)
    await run.ledger.add_approval_rules(run.thread_id, _rules(claimed))
    touched.update(_answered_or_returned(trailing, held, waiting))
    batches = tuple(batch for batch in held if batch.batch_id in touched)
    released = [record for record in replayed if record.batch_id not in held_ids]
    recorded = {**_held_results(held, entries), **await _replayed_results(run, released)}
    transcript = without_stand_ins(assigned, recorded)
    return Resumption(
        messages=transcript,
        current_from=_current_from(transcript),
        batches=batches,
        records=await _batch_records(run, batches),
        known_results=_known_results(transcript),
        answers=answers,
        replays=_replayed_batches(transcript, released),
    )


async def _journal(run: _RunState, held: Sequence[HeldBatch]) -> dict[str, JournalEntry | None]:
    """The journal entry of every call of the held batches, by occurrence."""
    return {
        item.occurrence_id: await run.ledger.execution(run.thread_id, item.occurrence_id)
        for batch in held
        for item in batch.calls
    }


def _held_results(
    held: Sequence[HeldBatch], entries: Mapping[str, JournalEntry | None]
) -> dict[str, ToolResultPart | None]:
    """The journaled result of each held call the loop runs (``None``: none yet); a
    client-owned call's result is the caller's to give, so it is not listed."""
    recorded: dict[str, ToolResultPart | None] = {}
    for batch in held:
        for item in batch.calls:
            if item.disposition != "client":
                entry = entries[item.occurrence_id]
                recorded[item.occurrence_id] = entry.result if entry is not None else None
    return recorded


async def _replayed_results(
    run: _RunState, records: Sequence[ApprovalRecord]
) -> dict[str, ToolResultPart | None]:
    """The journaled results of the occurrences whose consumed approvals are replayed."""
    recorded: dict[str, ToolResultPart | None] = {}
    for record in records:
        entry = await run.ledger.execution(run.thread_id, record.occurrence_id)
        recorded[record.occurrence_id] = entry.result if entry is not None else None
    return recorded


def without_stand_ins(
    messages: Sequence[Message], recorded: Mapping[str, ToolResultPart | None]
) -> tuple[Message, ...]:
    """``messages`` without the caller's stand-in results for calls the ledger speaks for.

    ``recorded`` maps an occurrence to its journaled result (``None``: it has none yet — it
    awaits a decision or input, or was interrupted). A caller's result for such an
    occurrence stays only when it carries the journaled result's text; anything else (a
    "pending" placeholder a frontend wrote, a guess) is not a result: the model never sees
    it, and the loop's own result takes its place. Messages left empty are dropped.
    """
    if not recorded:
        return tuple(messages)
    out: list[Message] = []
    for message in messages:
        parts = tuple(part for part in message.parts if not _stand_in(part, recorded))
        if len(parts) == len(message.parts):
            out.append(message)
        elif parts:
            out.append(replace(message, parts=parts))
    return tuple(out)


def _stand_in(part: Part, recorded: Mapping[str, ToolResultPart | None]) -> bool:
    if not isinstance(part, ToolResultPart):
        return False
    occurrence = part.occurrence_id
    if occurrence is None or occurrence not in recorded:
        return False
    result = recorded[occurrence]
    return result is None or result.text != part.text


def _hosted_decision(part: ApprovalResponsePart, requests: dict[str, ApprovalRequestPart]) -> bool:
    """True for a decision on a hosted request (sent to the model, not checked here);
    refused when it asks for a standing rule (rules never cover hosted servers)."""
    request = requests.get(part.approval_id)
    if request is None or request.call.owner != "hosted":
        return False
    if part.remember is not None:
        raise DecisionRefusedError(
            "invalid_rule",
            part.approval_id,
            "standing approval rules cover local tools only; "
            f"a hosted server's tool ({request.call.server_label or 'hosted'}) is decided each time",
        )
    return True


def _rules(claimed: Sequence[ApprovalRecord]) -> list[ApprovalRule]:
    """The standing rules the claimed decisions asked for: the tool, or the tool with the
    arguments that run (the approved edit, else the recorded call's)."""
    rules: list[ApprovalRule] = []
    for record in claimed:
        decision = record.decision
        if decision is None or not decision.approved or decision.remember is None:
            continue
        arguments = decision.edited_arguments or record.call.arguments
        digest = arguments_digest(arguments) if decision.remember == "arguments" else None
        rules.append(ApprovalRule(tool_name=record.tool_name, arguments_digest=digest))
    return rules


async def _claim_all(
    run: _RunState, claims: dict[str, ApprovalDecision]
) -> tuple[ApprovalRecord, ...]:
    """Claim every decision at once (all or nothing); refuse naming one that was lost.

    Of concurrent resumes sharing a decision, exactly one claims; the others claim nothing,
    so no batch is ever left half-claimed (and stuck) whatever order they listed them in.
    """
    if not claims:
        return ()
    claimed = await run.ledger.claim_approvals(run.thread_id, claims)
    if claimed is not None:
        return claimed
    for approval_id in claims:
        record = await run.ledger.approval(run.thread_id, approval_id)
        if record is None or not record.live:
            raise _consumed(approval_id)
    raise _consumed(next(iter(claims)))  # unreachable: a claimed record is never live again


def _check_answers(trailing: Sequence[Part], waiting: dict[str, str]) -> None:
    for part in trailing:
        if isinstance(part, InputResponsePart) and part.request_id not in waiting:
            raise DecisionRefusedError(
                "unknown_input_request",
                part.request_id,
                f"no tool is waiting for input request {part.request_id!r}",
            )


async def _batch_records(run: _RunState, batches: Sequence[HeldBatch]) -> dict[str, ApprovalRecord]:
    """The current approval records of the batches to settle."""
    records: dict[str, ApprovalRecord] = {}
    for batch in batches:
        for item in batch.calls:
            if item.approval_id is not None:
                record = await run.ledger.approval(run.thread_id, item.approval_id)
                assert record is not None, "a held batch's approval records are never removed"
                records[item.approval_id] = record
    return records


def _scan(
    messages: Sequence[Message],
) -> tuple[dict[str, ToolCallPart], dict[str, ApprovalRequestPart], dict[str, JsonValue]]:
    """Calls by occurrence, approval requests by id, answers by request."""
    calls: dict[str, ToolCallPart] = {}
    requests: dict[str, ApprovalRequestPart] = {}
    answers: dict[str, JsonValue] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.occurrence_id is not None:
                calls[part.occurrence_id] = part
            elif isinstance(part, ApprovalRequestPart):
                requests[part.approval_id] = part
            elif isinstance(part, InputResponsePart):
                answers[part.request_id] = part.value
    return calls, requests, answers


def _known_results(messages: Sequence[Message]) -> dict[str, ToolResultPart]:
    """The caller's result of each occurrence; a later one supersedes an earlier one."""
    return {
        part.occurrence_id: part
        for message in messages
        for part in message.parts
        if isinstance(part, ToolResultPart) and part.occurrence_id is not None
    }


def _answered_or_returned(
    trailing: Sequence[Part], held: Sequence[HeldBatch], waiting: dict[str, str]
) -> set[str]:
    """Batches touched by an input answer or a client result in the current input."""
    touched = {waiting[part.request_id] for part in trailing if isinstance(part, InputResponsePart)}
    returned = {part.occurrence_id for part in trailing if isinstance(part, ToolResultPart)}
    for batch in held:
        if any(
            item.disposition == "client" and item.occurrence_id in returned for item in batch.calls
        ):
            touched.add(batch.batch_id)
    return touched


def _consumed(approval_id: str) -> DecisionRefusedError:
    return DecisionRefusedError(
        "approval_consumed", approval_id, f"approval {approval_id!r} was already decided"
    )


def _no_duplicates(decisions: Sequence[ApprovalResponsePart]) -> None:
    seen: set[str] = set()
    for decision in decisions:
        if decision.approval_id in seen:
            raise DecisionRefusedError(
                "duplicate_decision",
                decision.approval_id,
                f"approval {decision.approval_id!r} is decided twice in one input",
            )
        seen.add(decision.approval_id)


async def _check_approval(
    run: _RunState,
    decision: ApprovalResponsePart,
    calls: dict[str, ToolCallPart],
    requests: dict[str, ApprovalRequestPart],
    continuing: bool,
) -> tuple[ApprovalRecord, ApprovalDecision | None]:
    """The record a decision is about, and the decision to claim (``None``: a replay)."""
    approval_id = decision.approval_id
    record = await run.ledger.approval(run.thread_id, approval_id)
    if record is None:
        raise DecisionRefusedError(
            "unknown_approval", approval_id, f"no approval {approval_id!r} was requested here"
        )
    if not record.live and not await _is_replay(run, record, decision):
        raise _consumed(approval_id)
    shown = calls.get(record.occurrence_id)
    if shown is None and not continuing:
        raise DecisionRefusedError(
            "approval_call_missing",
            approval_id,
            f"the call approval {approval_id!r} is about is not in the transcript",
        )
    echoed = requests.get(approval_id)
    for call in (shown, echoed.call if echoed else None):
        if call is not None and (
            call.name != record.tool_name
            or arguments_digest(call.arguments) != record.arguments_digest
        ):
            raise DecisionRefusedError(
                "approval_tampered",
                approval_id,
                f"the call shown for approval {approval_id!r} differs from the one requested",
            )
    return record, _decision(decision) if record.live else None


async def _is_replay(
    run: _RunState, record: ApprovalRecord, decision: ApprovalResponsePart
) -> bool:
    """True when ``decision`` repeats the record's consumed decision exactly and the
    occurrence's result is in the journal (a retry after a failed model call) — or, in an
    exclusive run, its execution started and never finished (it was interrupted: the
    settle reports it as such and never runs it again)."""
    recorded = record.decision
    if recorded is None or recorded != ApprovalDecision(
        approved=decision.approved,
        reason=decision.reason,
        edited_arguments=decision.edited_arguments,
        remember=decision.remember,
    ):
        return False
    entry = await run.ledger.execution(run.thread_id, record.occurrence_id)
    if entry is None:
        return False
    return entry.state == "completed" or (run.exclusive and entry.state == "started")


def _replayed_batches(
    messages: Sequence[Message], records: Sequence[ApprovalRecord]
) -> tuple[tuple[tuple[ToolCallPart, ...], str | None], ...]:
    """The calls of each released batch a replayed decision belongs to, in model order,
    with the response id that made them.

    A batch is every local/client call of the model message holding the recorded call
    (just the recorded call when the transcript does not show it, under continuation).
    """
    batches: dict[str, tuple[tuple[ToolCallPart, ...], str | None]] = {}
    wanted = {record.occurrence_id: record for record in records}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.occurrence_id in wanted:
                record = wanted.pop(part.occurrence_id)
                batches.setdefault(record.batch_id, (_local_calls(message), record.response_id))
    for record in wanted.values():
        batches.setdefault(record.batch_id, ((record.call,), record.response_id))
    return tuple(batches.values())


def _local_calls(message: Message) -> tuple[ToolCallPart, ...]:
    return tuple(
        part
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.owner != "hosted" and part.occurrence_id
    )


def _decision(decision: ApprovalResponsePart) -> ApprovalDecision:
    edited = decision.edited_arguments
    if edited is not None:
        problem = None if decision.approved else "edits are only allowed with an approval"
        if problem is None:
            try:
                if not isinstance(json.loads(edited), dict):
                    problem = "edited arguments must be a JSON object"
            except ValueError:
                problem = "edited arguments are not valid JSON"
        if problem is not None:
            raise DecisionRefusedError("invalid_edit", decision.approval_id, problem)
    if decision.remember is not None and not decision.approved:
        raise DecisionRefusedError(
            "invalid_rule", decision.approval_id, "only an approval can be remembered"
        )
    return ApprovalDecision(
        approved=decision.approved,
        reason=decision.reason,
        edited_arguments=edited,
        remember=decision.remember,
    )


def _waiting_requests(
    held: Sequence[HeldBatch], entries: Mapping[str, JournalEntry | None]
) -> dict[str, str]:
    """Input request id → batch id, for every occurrence of a held batch awaiting input."""
    waiting: dict[str, str] = {}
    for batch in held:
        for item in batch.calls:
            entry = entries[item.occurrence_id]
            if entry is not None and entry.state == "awaiting_input":
                for request in entry.requests:
                    waiting[request.request_id] = batch.batch_id
    return waiting
