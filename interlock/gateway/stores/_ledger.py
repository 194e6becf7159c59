"""The core loop's ``LedgerStore`` over a key-value backend, scoped by tenant.

Keys: ``ledger/<tenant>/<thread>/{batch/<seq>-<id> | approval/<id> | journal/<occ> | budget
| rule/<tool>:<digest>}`` (standing approval rules, per tenant and thread).
Held batches carry a time-ordered sequence in their key, so a prefix scan lists them
oldest first. Compare-and-set steps map onto the backend's atomic ``add``, ``replace_if``
and ``replace_all_if`` (a batch of decisions is claimed all or nothing), which hold
across processes for SQLite and Redis.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from interlock.core_loop import (
    ApprovalDecision,
    ApprovalRecord,
    ApprovalRule,
    Budget,
    HeldBatch,
    JournalEntry,
    dump_approval,
    dump_batch,
    dump_budget,
    dump_journal_entry,
    dump_rule,
    load_approval,
    load_batch,
    load_budget,
    load_journal_entry,
    load_rule,
)
from interlock.gateway.stores._backend import KeyValueBackend
from interlock.gateway.stores._quote import quoted
from interlock.gateway.stores._thread_memo import compact
from interlock.transcript import InputRequestPart, JsonValue, ToolResultPart

_dumps = compact


class KeyValueLedgerStore:
    """A :class:`~interlock.core_loop.LedgerStore` for one tenant over a shared backend."""

    def __init__(self, backend: KeyValueBackend, tenant: str) -> None:
        self._backend = backend
        self._tenant = quoted(tenant)

    def _key(self, thread_id: str, *parts: str) -> str:
        return "/".join(["ledger", self._tenant, quoted(thread_id), *map(quoted, parts)])

    async def hold_batch(
        self, thread_id: str, batch: HeldBatch, approvals: Sequence[ApprovalRecord]
    ) -> None:
        """Hold ``batch`` and its live approval records (one atomic write). A batch held
        again (paused anew, e.g. for input) replaces its entry and keeps its place."""
        key = await self._held_key(thread_id, batch.batch_id)
        if key is None:
            sequence = f"{time.time_ns():020d}-{batch.batch_id}"
            key = self._key(thread_id, "batch", sequence)
        items = {key: _dumps(dump_batch(batch))}
        for record in approvals:
            items[self._key(thread_id, "approval", record.approval_id)] = _dumps(
                dump_approval(record)
            )
        await self._backend.set_many(items)

    async def held_batches(self, thread_id: str) -> tuple[HeldBatch, ...]:
        """Every held batch of the thread, oldest first."""
        rows = await self._backend.scan(self._key(thread_id, "batch") + "/")
        return tuple(load_batch(json.loads(value)) for _, value in rows)

    async def _held_key(self, thread_id: str, batch_id: str) -> str | None:
        suffix = "-" + quoted(batch_id)
        for key, _ in await self._backend.scan(self._key(thread_id, "batch") + "/"):
            if key.endswith(suffix):
                return key
        return None

    async def release_batch(self, thread_id: str, batch_id: str) -> None:
        """Forget a resolved batch (its approval records stay, consumed)."""
        prefix = self._key(thread_id, "batch") + "/"
        suffix = "-" + quoted(batch_id)
        for key, _ in await self._backend.scan(prefix):
            if key.endswith(suffix):
                await self._backend.delete(key)

    async def approval(self, thread_id: str, approval_id: str) -> ApprovalRecord | None:
        """The record for ``approval_id``, live or consumed."""
        raw = await self._backend.get(self._key(thread_id, "approval", approval_id))
        return None if raw is None else load_approval(json.loads(raw))

    async def claim_approvals(
        self, thread_id: str, decisions: Mapping[str, ApprovalDecision]
    ) -> tuple[ApprovalRecord, ...] | None:
        """Compare-and-set every decision on live records in one atomic backend write
        (one SQLite transaction, one Redis script): all are claimed or none."""
        keys = [self._key(thread_id, "approval", approval_id) for approval_id in decisions]
        raws = await self._backend.get_many(keys)
        changes: dict[str, tuple[str, str]] = {}
        claimed: list[ApprovalRecord] = []
        for key, raw, decision in zip(keys, raws, decisions.values(), strict=True):
            if raw is None:
                return None
            record = load_approval(json.loads(raw))
            if not record.live:
                return None
            record = replace(record, decision=decision)
            changes[key] = (raw, _dumps(dump_approval(record)))
            claimed.append(record)
        if not await self._backend.replace_all_if(changes):
            return None
        return tuple(claimed)

    async def begin_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Move the occurrence from absent / awaiting_input to started (compare-and-set)."""
        key = self._key(thread_id, "journal", occurrence_id)
        started = _dumps(
            dump_journal_entry(JournalEntry(occurrence_id=occurrence_id, state="started"))
        )
        if await self._backend.add(key, started):
            return True
        raw = await self._backend.get(key)
        if raw is None or load_journal_entry(json.loads(raw)).state != "awaiting_input":
            return False
        return await self._backend.replace_if(key, raw, started)

    async def retry_execution(self, thread_id: str, occurrence_id: str) -> bool:
        """Move the occurrence from started to retrying (compare-and-set)."""
        key = self._key(thread_id, "journal", occurrence_id)
        raw = await self._backend.get(key)
        if raw is None or load_journal_entry(json.loads(raw)).state != "started":
            return False
        retrying = JournalEntry(occurrence_id=occurrence_id, state="retrying")
        return await self._backend.replace_if(key, raw, _dumps(dump_journal_entry(retrying)))

    async def pause_execution(
        self, thread_id: str, occurrence_id: str, requests: Sequence[InputRequestPart]
    ) -> None:
        """Record that the occurrence awaits user input."""
        entry = JournalEntry(
            occurrence_id=occurrence_id, state="awaiting_input", requests=tuple(requests)
        )
        await self._put(self._key(thread_id, "journal", occurrence_id), dump_journal_entry(entry))

    async def complete_execution(
        self, thread_id: str, occurrence_id: str, result: ToolResultPart
    ) -> None:
        """Record the occurrence's terminal result (durable before this returns)."""
        entry = JournalEntry(occurrence_id=occurrence_id, state="completed", result=result)
        await self._put(self._key(thread_id, "journal", occurrence_id), dump_journal_entry(entry))

    async def execution(self, thread_id: str, occurrence_id: str) -> JournalEntry | None:
        """The occurrence's journal entry, if any."""
        raw = await self._backend.get(self._key(thread_id, "journal", occurrence_id))
        return None if raw is None else load_journal_entry(json.loads(raw))

    async def budget(self, thread_id: str) -> Budget:
        """The thread's budget counters (zero when none were saved)."""
        raw = await self._backend.get(self._key(thread_id, "budget"))
        return Budget() if raw is None else load_budget(json.loads(raw))

    async def save_budget(self, thread_id: str, budget: Budget) -> None:
        """Replace the thread's budget counters."""
        await self._put(self._key(thread_id, "budget"), dump_budget(budget))

    async def add_approval_rules(self, thread_id: str, rules: Sequence[ApprovalRule]) -> None:
        """Remember standing rules (one key per rule: adding a known one changes nothing)."""
        if rules:
            await self._backend.set_many(
                {self._key(thread_id, "rule", rule.key): _dumps(dump_rule(rule)) for rule in rules}
            )

    async def approval_rules(self, thread_id: str) -> tuple[ApprovalRule, ...]:
        """The thread's standing rules."""
        rows = await self._backend.scan(self._key(thread_id, "rule") + "/")
        return tuple(load_rule(json.loads(value)) for _, value in rows)

    async def _put(self, key: str, value: JsonValue) -> None:
        await self._backend.set_many({key: _dumps(value)})
