"""Two gateway processes on one store resume the same batch of approvals at once, listing
the decisions in opposite orders: each tool runs exactly once, a loser gets a clear
refusal, and the thread never gets stuck (SQLite file and real Redis).

Before claims were all or nothing, each resume could take one decision and fail on the
other: both were refused, nothing ran, and every later input was refused for good.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.gateway.agui.counted import executions
from tests.gateway.agui.harness import new_id, of_type, open_socket, run_input, user
from tests.gateway.agui.processes import Cluster, Process, Shared

LOSER_CODES = {"APPROVAL_CONSUMED", "THREAD_CONFLICT"}
"""What the resume that lost the race may be told (both say: someone else decided)."""


def decisions(interrupts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
        for item in interrupts
    ]


async def race(shared: Cluster, processes: list[Process], round_number: int) -> None:
    path, thread = new_id("race"), new_id("t")
    text = f'call send_email and call delete_file with {{"path":"{path}"}}'
    mails = executions(shared.counts, "send_email", "default")
    first, second = processes
    async with open_socket(first) as one, open_socket(second) as two:
        paused = await one.run(run_input(thread, [user(text)]))
        interrupts = paused[-1]["outcome"]["interrupts"]
        assert len(interrupts) == 2
        forward, backward = decisions(interrupts), decisions(interrupts)[::-1]
        outcomes = await asyncio.gather(
            one.run(run_input(thread, resume=forward)),
            two.run(run_input(thread, resume=backward)),
        )
        finished = [events for events in outcomes if events[-1]["type"] == "RUN_FINISHED"]
        refused = [events[-1] for events in outcomes if events[-1]["type"] == "RUN_ERROR"]
        assert finished, [(e[-1].get("code"), e[-1].get("message")) for e in outcomes]
        assert {error["code"] for error in refused} <= LOSER_CODES, refused
        assert sum(len(of_type(events, "TOOL_CALL_RESULT")) for events in finished) >= 2
        # The thread goes on: the same resume is an idempotent replay, then a new turn runs.
        again = await two.run(run_input(thread, resume=forward))
        assert again[-1]["type"] == "RUN_FINISHED", again[-1]
        later = await one.run(run_input(thread, [user(f"round {round_number} done")]))
        assert later[-1]["type"] == "RUN_FINISHED", later[-1]
    assert executions(shared.counts, "delete_file", path) == 1
    assert executions(shared.counts, "send_email", "default") == mails + 1


async def test_opposite_order_resumes_claim_all_or_nothing(shared: Shared) -> None:
    for round_number in range(5):
        await race(shared.cluster, shared.processes[:2], round_number)
