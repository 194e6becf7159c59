"""The per-thread run ledger: approval records, held batches, budget and execution journal.

The ledger is the loop's control plane. The transcript a caller holds is never trusted for
authority: a decision is accepted only against a live :class:`ApprovalRecord`, the call that
runs is the recorded one, and the journal makes every tool occurrence run at most once.

Everything here is a frozen value with a JSON form (``dump_*`` / ``load_*``), so a store can
keep it in SQLite or Redis as text. Parts are serialized with :mod:`interlock.transcript`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeAlias, cast

from interlock.transcript import (
    InputRequestPart,
    JsonObject,
    JsonValue,
    ToolCallPart,
    ToolOwner,
    ToolResultPart,
    load_part,
    to_json,
)

Disposition: TypeAlias = Literal["execute", "approval", "client", "unknown"]
"""How the loop treats one call of a batch (decided for the whole batch before anything runs)."""

JournalState: TypeAlias = Literal["started", "retrying", "awaiting_input", "completed"]


def arguments_digest(arguments: str) -> str:
    """A digest of the call's arguments in canonical JSON form.

    Key order and whitespace do not matter; malformed JSON is digested as its raw text, so
    a changed malformed text still changes the digest.
    """
    try:
        canonical = json.dumps(
            json.loads(arguments) if arguments.strip() else {},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
    except ValueError:
        canonical = "raw:" + arguments
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecision:
    """A human decision as recorded; ``edited_arguments`` is an explicit approve-with-edits;
    ``remember`` made a standing rule from it (:class:`ApprovalRule`)."""

    approved: bool
    reason: str | None = None
    edited_arguments: str | None = None
    remember: Literal["tool", "arguments"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRule:
    """A standing approval in one thread: later calls it matches need no decision.

    Made by a human approval with ``remember``. It matches a call of the local tool
    ``tool_name`` — with exactly these arguments when ``arguments_digest`` is set (an
    empty-argument rule covers only calls with empty arguments, never the whole tool).
    Rules are for local tools only: a hosted tool's approvals (whatever its
    ``server_label``) are decided each time, so no rule ever crosses to a hosted server.
    """

    tool_name: str
    arguments_digest: str | None = None

    def matches(self, call: ToolCallPart) -> bool:
        """True if ``call`` needs no decision under this rule."""
        return (
            call.owner == "local"
            and call.name == self.tool_name
            and (
                self.arguments_digest is None
                or self.arguments_digest == arguments_digest(call.arguments)
            )
        )

    @property
    def key(self) -> str:
        """A stable identity (the same rule remembered twice is stored once)."""
        return f"{self.tool_name}:{self.arguments_digest or '*'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRecord:
    """The server-held authority for one surfaced approval request.

    ``call`` is the exact call that was surfaced (with its occurrence id); it is what runs
    when approved, never a call echoed back by the caller. ``decision`` is ``None`` while
    the record is live; once set the record is consumed and never accepts another decision.
    ``response_id`` is the service's id of the response that made the call (with
    service-side state): a replayed decision continuing from a later response must not
    send the call's result to the service again.
    """

    approval_id: str
    batch_id: str
    occurrence_id: str
    tool_name: str
    arguments_digest: str
    owner: ToolOwner
    call: ToolCallPart
    decision: ApprovalDecision | None = None
    response_id: str | None = None

    @property
    def live(self) -> bool:
        """True until a decision has been claimed."""
        return self.decision is None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedCall:
    """One call of a held batch and how the loop classified it."""

    call: ToolCallPart
    disposition: Disposition
    approval_id: str | None = None

    @property
    def occurrence_id(self) -> str:
        """The call's occurrence id (always set on a planned call)."""
        assert self.call.occurrence_id is not None
        return self.call.occurrence_id


@dataclass(frozen=True, slots=True, kw_only=True)
class HeldBatch:
    """A batch of calls from one model response that paused the run.

    Calls are in model order. The batch stays held until every call has a terminal result;
    a later, unrelated turn leaves it alone.
    """

    batch_id: str
    calls: tuple[PlannedCall, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalEntry:
    """The execution state of one occurrence.

    ``started`` is written before the tool runs; ``completed`` (with ``result``) after.
    ``awaiting_input`` means the tool asked the user (``requests``) and may run again only
    with the answers. A ``started`` entry that never completes is indeterminate: it is
    reported, never silently run again — unless its tool's ``on_interrupt`` is ``retry``:
    then it moves to ``retrying`` and runs once more; a ``retrying`` entry that never
    completes is reported (never a third run).
    """

    occurrence_id: str
    state: JournalState
    result: ToolResultPart | None = None
    requests: tuple[InputRequestPart, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Counters shared by every re-entry of one run (a resume continues them).

    ``iterations`` counts model calls with tools enabled; ``function_calls`` counts
    executions started (a resumed input-paused execution is not counted twice);
    ``consecutive_errors`` counts batches in a row that produced a failed result.
    """

    iterations: int = 0
    function_calls: int = 0
    consecutive_errors: int = 0


class LedgerStore(Protocol):
    """Where a thread's ledger lives. Implementations: in memory here; SQLite and Redis in
    the gateway. Every method is scoped by ``thread_id``; values are the frozen types above.

    Atomicity each method must give:

    - :meth:`hold_batch` stores (or replaces, same ``batch_id``) the batch and adds all its
      approval records together, all or nothing. Approval ids are fresh; a record is never
      replaced by ``hold_batch`` (only :meth:`claim_approvals` changes one).
    - :meth:`claim_approvals` is an atomic compare-and-set over a whole set of decisions:
      it sets every decision only if every record exists and has none yet, and returns
      the updated records; otherwise it changes nothing and returns ``None``. Of
      concurrent claims sharing any approval, exactly one gets records — whatever order
      each lists them in — so a batch is never left half-claimed.
    - :meth:`begin_execution` is an atomic compare-and-set: it moves an occurrence from
      absent or ``awaiting_input`` to ``started`` and returns ``True``; for an occurrence
      already ``started`` or ``completed`` it changes nothing and returns ``False``.
    - :meth:`retry_execution` is an atomic compare-and-set from ``started`` to
      ``retrying`` (``True``); in any other state it changes nothing (``False``).
    - :meth:`complete_execution` and :meth:`pause_execution` overwrite the occurrence's entry
      and must be durable before they return (a result is recorded before the next model
      call).
    - The rest are plain reads and last-write-wins writes.
    """

    async def hold_batch(
        self, thread_id: str, batch: HeldBatch, approvals: Sequence[ApprovalRecord]
    ) -> None:
        """Hold ``batch`` and its live approval records."""
        ...

    async def held_batches(self, thread_id: str) -> tuple[HeldBatch, ...]:
        """Every held batch of the thread, oldest first."""
        ...

    async def release_batch(self, thread_id: str, batch_id: str) -> None:
        """Forget a batch whose calls all have terminal results (records stay, consumed)."""
        ...

    async def approval(self, thread_id: str, approval_id: str) -> ApprovalRecord | None:
        """The record for ``approval_id``, live or consumed."""
        ...

    async def claim_approvals(
        self, thread_id: str, decisions: Mapping[str, ApprovalDecision]
    ) -> tuple[ApprovalRecord, ...] | None:
        """Record every decision (approval id → decision) on live records, all or nothing;
        the claimed records in ``decisions`` order, or ``None`` if any is not live."""
        ...

    async def begin_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Mark the occurrence started (compare-and-set); ``False`` if it ran or is running."""
        ...

    async def retry_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Mark an interrupted (``started``) occurrence as being run once more
        (compare-and-set); ``False`` if it is in any other state."""
        ...

    async def pause_execution(
        self, thread_id: str, occurrence_id: str, requests: Sequence[InputRequestPart]
    ) -> None:
        """The occurrence asked the user for input; it may begin again with the answers."""
        ...

    async def complete_execution(
        self, thread_id: str, occurrence_id: str, result: ToolResultPart
    ) -> None:
        """Record the occurrence's terminal result."""
        ...

    async def execution(self, thread_id: str, occurrence_id: str) -> JournalEntry | None:
        """The occurrence's journal entry, if any."""
        ...

    async def budget(self, thread_id: str) -> Budget:
        """The thread's current budget counters (zero when none were saved)."""
        ...

    async def add_approval_rules(self, thread_id: str, rules: Sequence[ApprovalRule]) -> None:
        """Remember standing rules for the thread (adding a known rule changes nothing)."""
        ...

    async def approval_rules(self, thread_id: str) -> tuple[ApprovalRule, ...]:
        """The thread's standing rules."""
        ...

    async def save_budget(self, thread_id: str, budget: Budget) -> None:
        """Replace the thread's budget counters."""
        ...


_Journaled: TypeAlias = "ToolResultPart | tuple[InputRequestPart, ...] | Literal[True] | None"
"""An occurrence's journal state in its cheapest form: ``None`` started, ``True``
retrying, a tuple of requests awaiting input, a result completed. :class:`JournalEntry`
is built on read."""


@dataclass(slots=True)
class _Thread:
    batches: dict[str, HeldBatch]
    approvals: dict[str, ApprovalRecord]
    journal: dict[str, _Journaled]
    budget: Budget
    rules: dict[str, ApprovalRule]


class InMemoryLedgerStore:
    """A :class:`LedgerStore` in a dict. Atomic because each method runs without awaiting.

    For tests and single-process use; state is lost with the process.
    """

    def __init__(self) -> None:
        self._threads: dict[str, _Thread] = {}

    def _thread(self, thread_id: str) -> _Thread:
        thread = self._threads.get(thread_id)
        if thread is None:
            thread = _Thread(batches={}, approvals={}, journal={}, budget=Budget(), rules={})
            self._threads[thread_id] = thread
        return thread

    async def hold_batch(
        self, thread_id: str, batch: HeldBatch, approvals: Sequence[ApprovalRecord]
    ) -> None:
        """Hold ``batch`` and its live approval records."""
        thread = self._thread(thread_id)
        thread.batches[batch.batch_id] = batch
        for record in approvals:
            thread.approvals.setdefault(record.approval_id, record)

    async def held_batches(self, thread_id: str) -> tuple[HeldBatch, ...]:
        """Every held batch of the thread, oldest first."""
        return tuple(self._thread(thread_id).batches.values())

    async def release_batch(self, thread_id: str, batch_id: str) -> None:
        """Forget a resolved batch."""
        self._thread(thread_id).batches.pop(batch_id, None)

    async def approval(self, thread_id: str, approval_id: str) -> ApprovalRecord | None:
        """The record for ``approval_id``."""
        return self._thread(thread_id).approvals.get(approval_id)

    async def claim_approvals(
        self, thread_id: str, decisions: Mapping[str, ApprovalDecision]
    ) -> tuple[ApprovalRecord, ...] | None:
        """Compare-and-set every decision on live records, all or nothing."""
        approvals = self._thread(thread_id).approvals
        records = [approvals.get(approval_id) for approval_id in decisions]
        if any(record is None or not record.live for record in records):
            return None
        claimed = tuple(
            replace(record, decision=decision)
            for record, decision in zip(records, decisions.values(), strict=True)
            if record is not None
        )
        approvals.update((record.approval_id, record) for record in claimed)
        return claimed

    async def begin_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Compare-and-set the occurrence to started."""
        journal = self._thread(thread_id).journal
        if occurrence_id in journal and type(journal[occurrence_id]) is not tuple:
            return False  # started or completed
        journal[occurrence_id] = None
        return True

    async def retry_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Compare-and-set the occurrence from started to retrying."""
        journal = self._thread(thread_id).journal
        if occurrence_id not in journal or journal[occurrence_id] is not None:
            return False
        journal[occurrence_id] = True
        return True

    async def pause_execution(
        self, thread_id: str, occurrence_id: str, requests: Sequence[InputRequestPart]
    ) -> None:
        """Record that the occurrence awaits user input."""
        self._thread(thread_id).journal[occurrence_id] = tuple(requests)

    async def complete_execution(
        self, thread_id: str, occurrence_id: str, result: ToolResultPart
    ) -> None:
        """Record the occurrence's terminal result."""
        self._thread(thread_id).journal[occurrence_id] = result

    async def execution(self, thread_id: str, occurrence_id: str) -> JournalEntry | None:
        """The occurrence's journal entry."""
        journal = self._thread(thread_id).journal
        if occurrence_id not in journal:
            return None
        state = journal[occurrence_id]
        if state is None:
            return JournalEntry(occurrence_id=occurrence_id, state="started")
        if state is True:
            return JournalEntry(occurrence_id=occurrence_id, state="retrying")
        if isinstance(state, tuple):
            return JournalEntry(occurrence_id=occurrence_id, state="awaiting_input", requests=state)
        return JournalEntry(occurrence_id=occurrence_id, state="completed", result=state)

    async def budget(self, thread_id: str) -> Budget:
        """The thread's budget counters."""
        return self._thread(thread_id).budget

    async def save_budget(self, thread_id: str, budget: Budget) -> None:
        """Replace the thread's budget counters."""
        self._thread(thread_id).budget = budget

    async def add_approval_rules(self, thread_id: str, rules: Sequence[ApprovalRule]) -> None:
        """Remember standing rules for the thread."""
        self._thread(thread_id).rules.update((rule.key, rule) for rule in rules)

    async def approval_rules(self, thread_id: str) -> tuple[ApprovalRule, ...]:
        """The thread's standing rules."""
        return tuple(self._thread(thread_id).rules.values())


# JSON forms, for stores that keep text ------------------------------------------------


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object")
    return cast(dict[str, Any], value)


def _call(value: object, where: str) -> ToolCallPart:
    part = load_part(value, where)
    if not isinstance(part, ToolCallPart):
        raise ValueError(f"{where}: expected a tool_call part")
    return part


def dump_approval(record: ApprovalRecord) -> JsonObject:
    """An approval record as JSON."""
    return cast(JsonObject, to_json(record))


def load_approval(value: JsonValue) -> ApprovalRecord:
    """An approval record from :func:`dump_approval` output."""
    data = _object(value, "approval")
    decision = data.get("decision")
    return ApprovalRecord(
        approval_id=data["approval_id"],
        batch_id=data["batch_id"],
        occurrence_id=data["occurrence_id"],
        tool_name=data["tool_name"],
        arguments_digest=data["arguments_digest"],
        owner=data.get("owner", "local"),
        call=_call(data["call"], "approval.call"),
        decision=None if decision is None else ApprovalDecision(**_object(decision, "decision")),
        response_id=data.get("response_id"),
    )


def dump_batch(batch: HeldBatch) -> JsonObject:
    """A held batch as JSON."""
    return cast(JsonObject, to_json(batch))


def load_batch(value: JsonValue) -> HeldBatch:
    """A held batch from :func:`dump_batch` output."""
    data = _object(value, "batch")
    calls: list[PlannedCall] = []
    for index, item in enumerate(cast(list[object], data.get("calls", []))):
        planned = _object(item, f"batch.calls[{index}]")
        calls.append(
            PlannedCall(
                call=_call(planned["call"], f"batch.calls[{index}].call"),
                disposition=planned["disposition"],
                approval_id=planned.get("approval_id"),
            )
        )
    return HeldBatch(batch_id=data["batch_id"], calls=tuple(calls))


def dump_journal_entry(entry: JournalEntry) -> JsonObject:
    """A journal entry as JSON."""
    return cast(JsonObject, to_json(entry))


def load_journal_entry(value: JsonValue) -> JournalEntry:
    """A journal entry from :func:`dump_journal_entry` output."""
    data = _object(value, "journal")
    result = data.get("result")
    requests: list[InputRequestPart] = []
    for index, item in enumerate(cast(list[object], data.get("requests", []))):
        part = load_part(item, f"journal.requests[{index}]")
        if not isinstance(part, InputRequestPart):
            raise ValueError(f"journal.requests[{index}]: expected an input_request part")
        requests.append(part)
    loaded = None if result is None else load_part(result, "journal.result")
    if loaded is not None and not isinstance(loaded, ToolResultPart):
        raise ValueError("journal.result: expected a tool_result part")
    return JournalEntry(
        occurrence_id=data["occurrence_id"],
        state=data["state"],
        result=loaded,
        requests=tuple(requests),
    )


def dump_budget(budget: Budget) -> JsonObject:
    """Budget counters as JSON."""
    return cast(JsonObject, to_json(budget))


def load_budget(value: JsonValue) -> Budget:
    """Budget counters from :func:`dump_budget` output."""
    return Budget(**_object(value, "budget"))


def dump_rule(rule: ApprovalRule) -> JsonObject:
    """A standing approval rule as JSON."""
    return cast(JsonObject, to_json(rule))


def load_rule(value: JsonValue) -> ApprovalRule:
    """A standing approval rule from :func:`dump_rule` output."""
    return ApprovalRule(**_object(value, "rule"))
