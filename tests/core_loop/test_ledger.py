"""The run ledger: record JSON forms and the in-memory store's compare-and-set semantics."""

from __future__ import annotations

import asyncio

from interlock.core_loop import (
    ApprovalDecision,
    ApprovalRecord,
    Budget,
    HeldBatch,
    InMemoryLedgerStore,
    JournalEntry,
    PlannedCall,
    arguments_digest,
    dump_approval,
    dump_batch,
    dump_budget,
    dump_journal_entry,
    load_approval,
    load_batch,
    load_budget,
    load_journal_entry,
)
from interlock.transcript import InputRequestPart, TextPart, ToolCallPart, ToolResultPart

CALL = ToolCallPart(call_id="c1", name="delete", arguments='{"path": "/a"}', occurrence_id="occ_1")
RECORD = ApprovalRecord(
    approval_id="apr_1",
    batch_id="batch_1",
    occurrence_id="occ_1",
    tool_name="delete",
    arguments_digest=arguments_digest(CALL.arguments),
    owner="local",
    call=CALL,
)
BATCH = HeldBatch(
    batch_id="batch_1",
    calls=(
        PlannedCall(call=CALL, disposition="approval", approval_id="apr_1"),
        PlannedCall(
            call=ToolCallPart(call_id="c2", name="look", occurrence_id="occ_2"),
            disposition="execute",
        ),
    ),
)


def test_arguments_digest_is_canonical() -> None:
    assert arguments_digest('{"a": 1, "b": 2}') == arguments_digest('{"b":2,"a":1}')
    assert arguments_digest("") == arguments_digest("{}")
    assert arguments_digest('{"a": 1}') != arguments_digest('{"a": 2}')
    assert arguments_digest("{broken") != arguments_digest("{broken!")


def test_records_round_trip_through_json() -> None:
    decided = ApprovalRecord(
        **{**_fields(RECORD), "decision": ApprovalDecision(approved=True, edited_arguments="{}")}
    )
    assert load_approval(dump_approval(RECORD)) == RECORD
    assert load_approval(dump_approval(decided)) == decided
    assert load_batch(dump_batch(BATCH)) == BATCH
    entry = JournalEntry(
        occurrence_id="occ_1",
        state="completed",
        result=ToolResultPart(call_id="c1", output=(TextPart(text="ok"),), occurrence_id="occ_1"),
    )
    paused = JournalEntry(
        occurrence_id="occ_1",
        state="awaiting_input",
        requests=(
            InputRequestPart(request_id="in_1", occurrence_id="occ_1", call_id="c1", prompt="?"),
        ),
    )
    assert load_journal_entry(dump_journal_entry(entry)) == entry
    assert load_journal_entry(dump_journal_entry(paused)) == paused
    budget = Budget(iterations=2, function_calls=3, consecutive_errors=1)
    assert load_budget(dump_budget(budget)) == budget
    assert load_budget(dump_budget(Budget())) == Budget()


def _fields(record: ApprovalRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in ApprovalRecord.__dataclass_fields__}


async def test_claim_approval_is_single_use() -> None:
    store = InMemoryLedgerStore()
    await store.hold_batch("t", BATCH, [RECORD])
    assert await store.held_batches("t") == (BATCH,)
    claims = await asyncio.gather(
        store.claim_approvals("t", {"apr_1": ApprovalDecision(approved=True)}),
        store.claim_approvals("t", {"apr_1": ApprovalDecision(approved=False)}),
    )
    assert [claim is not None for claim in claims] == [True, False]
    record = await store.approval("t", "apr_1")
    assert record is not None and record.decision == ApprovalDecision(approved=True)
    assert await store.claim_approvals("t", {"unknown": ApprovalDecision(approved=True)}) is None
    assert await store.approval("other-thread", "apr_1") is None
    await store.release_batch("t", "batch_1")
    assert await store.held_batches("t") == ()


async def test_journal_runs_an_occurrence_once() -> None:
    store = InMemoryLedgerStore()
    assert await store.begin_execution("t", "occ_1") is True
    assert await store.begin_execution("t", "occ_1") is False
    request = InputRequestPart(request_id="in_1", occurrence_id="occ_1", call_id="c1", prompt="?")
    await store.pause_execution("t", "occ_1", [request])
    assert await store.begin_execution("t", "occ_1") is True
    result = ToolResultPart(call_id="c1", occurrence_id="occ_1")
    await store.complete_execution("t", "occ_1", result)
    assert await store.begin_execution("t", "occ_1") is False
    assert await store.execution("t", "occ_1") == JournalEntry(
        occurrence_id="occ_1", state="completed", result=result
    )
    assert await store.retry_execution("t", "occ_1") is False  # completed
    assert await store.begin_execution("t", "occ_2") is True
    assert await store.retry_execution("t", "occ_2") is True
    assert await store.retry_execution("t", "occ_2") is False
    assert await store.begin_execution("t", "occ_2") is False
    assert await store.execution("t", "occ_2") == JournalEntry(
        occurrence_id="occ_2", state="retrying"
    )
    assert await store.budget("t") == Budget()
    await store.save_budget("t", Budget(iterations=1))
    assert await store.budget("t") == Budget(iterations=1)
