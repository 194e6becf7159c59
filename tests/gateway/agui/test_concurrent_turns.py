"""Concurrent turns on one thread, from two and three gateway processes sharing a store
(SQLite file and real Redis): turns are serialized by the thread lease, so every tool a
turn asks for runs exactly once and every turn lands in the thread; a turn that waits too
long is refused with ``THREAD_BUSY`` before anything runs, and resending it (the advice)
runs its tool once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.gateway.agui.counted import executions, until_count
from tests.gateway.agui.harness import new_id, of_type, open_socket, run_input, snapshot, user
from tests.gateway.agui.processes import Shared


def weather(city: str) -> dict[str, Any]:
    return user(f'call get_weather with {{"city":"{city}"}}')


@pytest.mark.parametrize("count", [2, 3])
async def test_concurrent_turns_are_serialized(shared: Shared, count: int) -> None:
    thread, cluster, processes = new_id("t"), shared.cluster, shared.processes[:count]
    cities = [new_id(f"city{n}") for n in range(count * 2)]

    async def turn(index: int) -> list[dict[str, Any]]:
        async with open_socket(processes[index % count]) as socket:
            return await socket.run(run_input(thread, [weather(cities[index])]))

    outcomes = await asyncio.gather(*(turn(index) for index in range(len(cities))))
    async with open_socket(processes[0]) as socket:
        final = await socket.run(run_input(thread))
    assert [events[-1]["type"] for events in outcomes] == ["RUN_FINISHED"] * len(cities)
    for city in cities:
        assert executions(cluster.counts, "get_weather", city) == 1
    results = [m for m in snapshot(final) if m["role"] == "tool"]
    assert sorted(m["content"] for m in results) == sorted(f"sunny in {c}" for c in cities)


async def test_a_busy_thread_is_refused_before_anything_runs_and_the_retry_runs_once(
    shared: Shared,
) -> None:
    thread, tag, city = new_id("t"), new_id("slow"), new_id("city")
    second_turn = run_input(thread, [weather(city)])
    cluster, first, second = shared.cluster, shared.processes[0], shared.impatient
    async with open_socket(first) as one, open_socket(second) as two:
        await one.send(run_input(thread, [user(f'call slow_task with {{"tag":"{tag}"}}')]))
        await until_count(cluster.counts, "slow_task", tag, "started")
        refused = await two.run(second_turn)
        assert refused[-1]["type"] == "RUN_ERROR" and refused[-1]["code"] == "THREAD_BUSY"
        assert of_type(refused, "TOOL_CALL_START") == []
        assert executions(cluster.counts, "get_weather", city, "started") == 0
        (cluster.counts / f"release-{tag}").touch()
        slow = await one.until_terminal()
        assert slow[-1]["type"] == "RUN_FINISHED", slow[-1]
        retried = await two.run(second_turn)
        again = await one.run(second_turn)  # the same input once more: a replay
    assert retried[-1]["type"] == "RUN_FINISHED", retried[-1]
    assert again[-1]["type"] == "RUN_FINISHED" and of_type(again, "TOOL_CALL_START") == []
    assert executions(cluster.counts, "get_weather", city) == 1
    assert executions(cluster.counts, "slow_task", tag) == 1
