"""The core loop's LedgerStore contract on memory, SQLite and Redis, scoped by tenant."""

from __future__ import annotations

import asyncio

from interlock.core_loop import ApprovalDecision, ApprovalRecord, Budget, HeldBatch, PlannedCall
from interlock.gateway.stores import Store
from interlock.transcript import InputRequestPart, TextPart, ToolCallPart, ToolResultPart


def _call(occurrence: str) -> ToolCallPart:
    return ToolCallPart(
        call_id="call_1", name="delete_file", arguments='{"path":"x"}', occurrence_id=occurrence
    )


def _record(approval_id: str, occurrence: str) -> ApprovalRecord:
    return ApprovalRecord(
        approval_id=approval_id,
        batch_id="b1",
        occurrence_id=occurrence,
        tool_name="delete_file",
        arguments_digest="d",
        owner="local",
        call=_call(occurrence),
    )


async def test_hold_list_and_release_batches_oldest_first(store: Store) -> None:
    ledger = store.ledger("tenant")
    first = HeldBatch(
        batch_id="b1",
        calls=(PlannedCall(call=_call("o1"), disposition="approval", approval_id="a1"),),
    )
    second = HeldBatch(batch_id="b2", calls=(PlannedCall(call=_call("o2"), disposition="execute"),))
    await ledger.hold_batch("th", first, [_record("a1", "o1")])
    await ledger.hold_batch("th", second, [])
    assert await ledger.held_batches("th") == (first, second)
    assert await ledger.approval("th", "a1") == _record("a1", "o1")
    await ledger.release_batch("th", "b1")
    assert await ledger.held_batches("th") == (second,)
    assert await ledger.approval("th", "a1") is not None


async def test_holding_a_batch_again_replaces_it_in_place(store: Store) -> None:
    """A batch paused again (an approved call now awaiting input) is held once, not twice:
    settling it twice would emit its results twice."""
    ledger = store.ledger("tenant")
    first = HeldBatch(
        batch_id="b1",
        calls=(PlannedCall(call=_call("o1"), disposition="approval", approval_id="a1"),),
    )
    second = HeldBatch(batch_id="b2", calls=(PlannedCall(call=_call("o2"), disposition="execute"),))
    await ledger.hold_batch("th", first, [_record("a1", "o1")])
    await ledger.hold_batch("th", second, [])
    await ledger.hold_batch("th", first, ())
    assert await ledger.held_batches("th") == (first, second)


async def test_claim_approval_is_single_use_under_concurrency(store: Store) -> None:
    ledger = store.ledger("tenant")
    await ledger.hold_batch("th", HeldBatch(batch_id="b1", calls=()), [_record("a1", "o1")])
    decision = ApprovalDecision(approved=True)
    claims = await asyncio.gather(
        *(ledger.claim_approvals("th", {"a1": decision}) for _ in range(10))
    )
    winners = [claim for claim in claims if claim is not None]
    assert len(winners) == 1 and winners[0][0].decision == decision
    assert await ledger.claim_approvals("th", {"a1": decision}) is None
    assert await ledger.claim_approvals("th", {"unknown": decision}) is None


async def test_a_batch_of_decisions_is_claimed_all_or_nothing(store: Store) -> None:
    """Resumes listing the same decisions in opposite orders: exactly one claims them all,
    the others claim none (before, each could take one and leave the batch stuck)."""
    ledger = store.ledger("tenant")
    ids = [f"a{index}" for index in range(4)]
    records = [_record(approval_id, f"o{approval_id}") for approval_id in ids]
    await ledger.hold_batch("th", HeldBatch(batch_id="b1", calls=()), records)
    yes, no = ApprovalDecision(approved=True), ApprovalDecision(approved=False)
    orders = [ids, ids[::-1], ids[1:] + ids[:1], ids[2:] + ids[:2]] * 3
    claims = await asyncio.gather(
        *(
            ledger.claim_approvals(
                "th", {approval_id: yes if n % 2 else no for approval_id in order}
            )
            for n, order in enumerate(orders)
        )
    )
    winners = [(n, claim) for n, claim in enumerate(claims) if claim is not None]
    assert len(winners) == 1
    n, claimed = winners[0]
    assert [record.approval_id for record in claimed] == orders[n]
    expected = yes if n % 2 else no
    for approval_id in ids:
        record = await ledger.approval("th", approval_id)
        assert record is not None and record.decision == expected


async def test_a_claim_with_one_consumed_decision_claims_nothing(store: Store) -> None:
    ledger = store.ledger("tenant")
    records = [_record("a1", "o1"), _record("a2", "o2")]
    await ledger.hold_batch("th", HeldBatch(batch_id="b1", calls=()), records)
    decision = ApprovalDecision(approved=True)
    assert await ledger.claim_approvals("th", {"a2": decision}) is not None
    assert await ledger.claim_approvals("th", {"a1": decision, "a2": decision}) is None
    record = await ledger.approval("th", "a1")
    assert record is not None and record.live
    assert await ledger.claim_approvals("th", {"a1": decision, "missing": decision}) is None
    record = await ledger.approval("th", "a1")
    assert record is not None and record.live


async def test_execution_journal_runs_an_occurrence_once(store: Store) -> None:
    ledger = store.ledger("tenant")
    starts = await asyncio.gather(*(ledger.begin_execution("th", "o1") for _ in range(10)))
    assert starts.count(True) == 1
    result = ToolResultPart(call_id="call_1", output=(TextPart(text="done"),), occurrence_id="o1")
    await ledger.complete_execution("th", "o1", result)
    entry = await ledger.execution("th", "o1")
    assert entry is not None and entry.state == "completed" and entry.result == result
    assert await ledger.begin_execution("th", "o1") is False


async def test_an_interrupted_execution_is_retried_at_most_once(store: Store) -> None:
    """``retry_execution``: started → retrying for exactly one of concurrent callers; an
    absent, retrying or completed occurrence is never retried, nor begun again."""
    ledger = store.ledger("tenant")
    assert await ledger.retry_execution("th", "o1") is False  # never started
    assert await ledger.begin_execution("th", "o1")
    retries = await asyncio.gather(*(ledger.retry_execution("th", "o1") for _ in range(10)))
    assert retries.count(True) == 1
    entry = await ledger.execution("th", "o1")
    assert entry is not None and entry.state == "retrying"
    assert await ledger.retry_execution("th", "o1") is False
    assert await ledger.begin_execution("th", "o1") is False
    result = ToolResultPart(call_id="call_1", output=(TextPart(text="done"),), occurrence_id="o1")
    await ledger.complete_execution("th", "o1", result)
    assert await ledger.retry_execution("th", "o1") is False


async def test_paused_execution_may_begin_again(store: Store) -> None:
    ledger = store.ledger("tenant")
    assert await ledger.begin_execution("th", "o1")
    request = InputRequestPart(
        request_id="r1", occurrence_id="o1", call_id="call_1", prompt="Which?"
    )
    await ledger.pause_execution("th", "o1", [request])
    entry = await ledger.execution("th", "o1")
    assert entry is not None and entry.requests == (request,)
    assert await ledger.begin_execution("th", "o1") is True
    assert await ledger.begin_execution("th", "o1") is False


async def test_budget_and_tenant_scoping(store: Store) -> None:
    ledger = store.ledger("tenant")
    assert await ledger.budget("th") == Budget()
    await ledger.save_budget("th", Budget(iterations=2, function_calls=1))
    assert await ledger.budget("th") == Budget(iterations=2, function_calls=1)
    assert await store.ledger("someone-else").budget("th") == Budget()
    assert await store.ledger("someone-else").begin_execution("th", "o1") is True
