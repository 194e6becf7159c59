"""Fault injection: ``kill -9`` the gateway at every step boundary, then go on.

Each case runs one tool step on an ``interlock serve`` subprocess that SIGKILLs itself at
one boundary (``INTERLOCK_TEST_KILL_AT``, see :mod:`tests.gateway.agui.counted`), for a
plain tool and for an approved one. Another gateway on the same store (the "restarted"
one) then gets the same input again, a reconnect (an input with no messages) and a new
turn. The tools count their executions in files: at most one execution, every call of
the thread ends with exactly one result, and the thread stays usable — on a SQLite file
and on a redis-server. The observed matrix must equal the one published in
``docs/core_loop.md`` (regenerate it from the failure message when behaviour changes).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from tests.gateway.agui.counted import BOUNDARIES, executions
from tests.gateway.agui.harness import new_id, open_socket, run_input, snapshot, user
from tests.gateway.agui.processes import Cluster, Process, store_url, wait_healthy
from tests.gateway.serving import emulators_on_loopback, stop

DOC = Path(__file__).resolve().parents[3] / "docs" / "core_loop.md"
KINDS = ("plain", "approved")
TOOLS = {"plain": "get_weather", "approved": "delete_file", "retry": "check_stock"}
ARGUMENTS = {"plain": "city", "approved": "path", "retry": "item"}
RETRIED_AT = ("tool_running", "tool_returned")
"""Where a tool declared ``on_interrupt = "retry"`` (``check_stock``) differs from a plain
one: killed after it started and before its result was journaled, it runs once more."""


@pytest.fixture(params=["sqlite", "redis"])
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    with emulators_on_loopback() as (upstream, _):
        # A short lease: a killed process blocks its thread only briefly.
        yield Cluster(tmp_path, store_url(request.param, tmp_path, redis), upstream, 1.0)


async def run(process: Process, body: dict[str, Any]) -> list[dict[str, Any]]:
    async with open_socket(process) as socket:
        return await socket.run(body)


async def run_until_killed(process: Process, body: dict[str, Any]) -> None:
    """Send ``body``; the gateway kills itself before the run's terminal event."""
    try:
        events = await run(process, body)
    except (ConnectionClosed, OSError):
        events = []
    assert events == [], f"the run ended normally: {events[-1:]}"
    while process.process.poll() is None:  # noqa: ASYNC110 - a subprocess, no event to wait on
        await asyncio.sleep(0.02)
    assert process.process.returncode == -9


def the_result(messages: list[dict[str, Any]], tool: str) -> str:
    """What the thread holds as the result of its one ``tool`` call (exactly one)."""
    calls = [c for m in messages for c in m.get("toolCalls", []) if c["function"]["name"] == tool]
    assert len(calls) == 1, messages
    results = [m for m in messages if m["role"] == "tool" and m["toolCallId"] == calls[0]["id"]]
    assert len(results) == 1, messages
    return (
        "interrupted"
        if results[0]["content"].startswith(("Interrupted", "Not executed"))
        else "recorded"
    )


async def case(
    cluster: Cluster, killer: Process, healthy: Process, boundary: str, kind: str
) -> str:
    """One row of the matrix, as observed."""
    thread, key, tool = new_id("t"), new_id(boundary), TOOLS[kind]
    argument = ARGUMENTS[kind]
    ask = run_input(thread, [user(f'call {tool} with {{"{argument}":"{key}"}}')])
    body = ask
    if kind == "approved":
        paused = await run(healthy, ask)
        interrupts = paused[-1]["outcome"]["interrupts"]
        decision = {"status": "resolved", "payload": {"approved": True}}
        body = run_input(thread, resume=[{"interruptId": i["id"], **decision} for i in interrupts])
    await run_until_killed(killer, body)
    resent = await run(healthy, body)  # the same input again, on the restarted gateway
    reconnected = await run(healthy, run_input(thread))
    later = await run(healthy, run_input(thread, [user("after the fault")]))
    ended = [events[-1]["type"] for events in (resent, reconnected, later)]
    assert ended == ["RUN_FINISHED"] * 3, [events[-1] for events in (resent, reconnected, later)]
    started = executions(cluster.counts, tool, key, "started")
    finished = executions(cluster.counts, tool, key, "finished")
    assert started <= (2 if kind == "retry" else 1) and finished <= started
    held = the_result(snapshot(later), tool)
    return f"| `{boundary}` | {kind} | {started} | {finished} | {held} | finished | finished | finished |"


HEADER = (
    "| killed at | tool | executions started | executions finished | the call's result in "
    "the thread | same input again | reconnect | next turn |\n"
    "|---|---|---|---|---|---|---|---|"
)


def published() -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- fault-matrix -->\n(.*?)\n<!-- /fault-matrix -->", text, re.S)
    assert found is not None, "docs/core_loop.md has no fault matrix"
    return found.group(1)


async def test_kill_9_at_every_step_boundary(cluster: Cluster) -> None:
    healthy = cluster.spawn()
    cases = [
        (boundary, kind)
        for boundary in BOUNDARIES
        for kind in (*KINDS, "retry")
        if kind != "retry" or boundary in RETRIED_AT
    ]
    killers = {
        (boundary, kind): cluster.spawn({"INTERLOCK_TEST_KILL_AT": boundary})
        for boundary, kind in cases
    }
    try:
        for process in (healthy, *killers.values()):
            wait_healthy(process)
        rows = await asyncio.gather(
            *(
                case(cluster, killer, healthy, boundary, kind)
                for (boundary, kind), killer in killers.items()
            )
        )
    finally:
        for process in (healthy, *killers.values()):
            stop(process.process)
    observed = "\n".join([HEADER, *rows])
    assert observed == published(), f"the fault matrix changed; observed:\n{observed}"
