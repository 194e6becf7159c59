"""Loop overhead per iteration, and history projection + compaction grouping scaling.

Run: ``python bench/loop_bench.py``. Prints absolute figures and ratios against a baseline
measured in the same run (the scripted model streamed and folded on its own).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time

from interlock.core_loop import (
    Agent,
    InMemoryLedgerStore,
    Limits,
    ScriptedModel,
    group_messages,
    project_history,
    run_agent,
    tool,
)
from interlock.transcript import (
    Message,
    Request,
    Response,
    ResponseBuilder,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

ITERATIONS = 10
"""Iterations per run (a realistic run makes a handful of model calls)."""
RUNS = 300


@tool
async def noop() -> None:
    """Does nothing."""


def script(iterations: int) -> list[Response]:
    calls = [
        Response(
            message=Message(
                role="assistant",
                parts=(ToolCallPart(call_id=f"c{i}", name="noop", arguments="{}"),),
            )
        )
        for i in range(iterations)
    ]
    return [*calls, Response(message=Message(role="assistant", parts=(TextPart(text="done"),)))]


async def baseline(iterations: int) -> float:
    """The scripted model alone: stream and fold every scripted turn, ``RUNS`` times."""
    total = 0.0
    for _ in range(RUNS):
        model = ScriptedModel(script(iterations))
        request = Request(model="m", messages=())
        start = time.perf_counter()
        for _ in range(iterations + 1):
            builder = ResponseBuilder()
            async for update in model.stream(request):
                builder.add(update)
            builder.build()
        total += time.perf_counter() - start
    return total


async def loop(iterations: int) -> float:
    """Whole runs through the loop (no-op tool, in-memory ledger), ``RUNS`` times."""
    agent = Agent(
        model="m",
        tools=(noop,),
        limits=Limits(max_iterations=iterations + 1, max_consecutive_errors=None),
    )
    prompt = [Message(role="user", parts=(TextPart(text="go"),))]
    total = 0.0
    for _ in range(RUNS):
        model = ScriptedModel(script(iterations))
        start = time.perf_counter()
        result = await run_agent(agent, model, prompt, ledger=InMemoryLedgerStore(), thread_id="b")
        total += time.perf_counter() - start
        assert result.outcome == "final" and result.function_calls == iterations
    return total


def transcript(size: int) -> list[Message]:
    messages: list[Message] = []
    for i in range(size // 4):
        occurrence = f"o{i}"
        messages += [
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="assistant",
                parts=(ToolCallPart(call_id="reused", name="f", occurrence_id=occurrence),),
            ),
            Message(
                role="tool", parts=(ToolResultPart(call_id="reused", occurrence_id=occurrence),)
            ),
            Message(role="assistant", parts=(TextPart(text="a"),)),
        ]
    return messages


def history_cost(size: int, repeats: int = 7) -> float:
    """Median time of projection + grouping; the collector is paused, as ``timeit`` does."""
    messages = transcript(size)
    timings: list[float] = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            project_history(messages)
            group_messages(messages)
            timings.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(timings)


async def main() -> None:
    base = min([await baseline(ITERATIONS) for _ in range(3)])
    full = min([await loop(ITERATIONS) for _ in range(3)])
    per_base = base / RUNS / (ITERATIONS + 1) * 1e6
    per_loop = full / RUNS / (ITERATIONS + 1) * 1e6
    overhead = per_loop - per_base
    print(f"scripted model alone:   {per_base:7.1f} µs per model turn (baseline)")
    print(
        f"loop with no-op tool:   {per_loop:7.1f} µs per iteration ({per_loop / per_base:.1f}x baseline)"
    )
    print(f"loop overhead:          {overhead:7.1f} µs per iteration (target <= 100 µs)")
    small, large = history_cost(10_000), history_cost(20_000)
    print(f"projection+grouping 10k: {small * 1e3:6.1f} ms")
    print(
        f"projection+grouping 20k: {large * 1e3:6.1f} ms ({large / small:.2f}x the 10k cost; target <= 2.2x, <= 50 ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
