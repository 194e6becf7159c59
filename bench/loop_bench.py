"""Loop overhead per iteration, and history projection + compaction grouping scaling.

Run: ``python bench/loop_bench.py``. Prints absolute figures and ratios against a baseline
measured in the same run (the scripted model streamed and folded on its own), in CPU time
(the stable figure on a shared machine) and wall time, best and median of several rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import statistics
import time
from collections.abc import Iterator

from interlock.core_loop import (
    Agent,
    InMemoryLedgerStore,
    Limits,
    LoopResult,
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


async def baseline(iterations: int, timings: Timings) -> None:
    """The scripted model alone: stream and fold every scripted turn, ``RUNS`` times."""
    request = Request(model="m", messages=())
    models = [ScriptedModel(script(iterations)) for _ in range(RUNS)]
    with timings.measure():
        for model in models:
            for _ in range(iterations + 1):
                builder = ResponseBuilder()
                async for update in model.stream(request):
                    builder.add(update)
                builder.build()


async def loop(iterations: int, timings: Timings) -> None:
    """Whole runs through the loop (no-op tool, in-memory ledger), ``RUNS`` times."""
    agent = Agent(
        model="m",
        tools=(noop,),
        limits=Limits(max_iterations=iterations + 1, max_consecutive_errors=None),
    )
    prompt = [Message(role="user", parts=(TextPart(text="go"),))]
    models = [ScriptedModel(script(iterations)) for _ in range(RUNS)]
    results: list[LoopResult] = []
    with timings.measure():
        for model in models:
            ledger = InMemoryLedgerStore()
            results.append(await run_agent(agent, model, prompt, ledger=ledger, thread_id="b"))
    assert all(r.outcome == "final" and r.function_calls == iterations for r in results)


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


def history_cost(sizes: tuple[int, ...], rounds: int = 9) -> dict[int, Timings]:
    """Projection + grouping per transcript size, the sizes interleaved round by round (so
    load drifts hit every size alike); the collector is paused, as ``timeit`` does."""
    transcripts = {size: transcript(size) for size in sizes}
    timings = {size: Timings() for size in sizes}
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            for size, messages in transcripts.items():
                with timings[size].measure():
                    project_history(messages)
                    group_messages(messages)
    finally:
        gc.enable()
    return timings


class Timings:
    """CPU and wall time of repeated measurements.

    CPU time (``time.process_time``) is the figure to read on a shared machine: wall time
    also counts the time the process waits for a core while other jobs run.
    """

    def __init__(self) -> None:
        self.cpu: list[float] = []
        self.wall: list[float] = []

    @contextlib.contextmanager
    def measure(self) -> Iterator[None]:
        cpu, wall = time.process_time(), time.perf_counter()
        yield
        self.cpu.append(time.process_time() - cpu)
        self.wall.append(time.perf_counter() - wall)

    def best(self, clock: str = "cpu") -> float:
        return min(getattr(self, clock))

    def median(self, clock: str = "cpu") -> float:
        return statistics.median(getattr(self, clock))


async def loop_cost(rounds: int = 7) -> tuple[Timings, Timings]:
    """The baseline and the loop, interleaved round by round."""
    base, full = Timings(), Timings()
    for _ in range(rounds):
        await baseline(ITERATIONS, base)
        await loop(ITERATIONS, full)
    return base, full


async def main() -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    base, full = await loop_cost()
    turns = RUNS * (ITERATIONS + 1)
    for clock in ("cpu", "wall"):
        per_base = base.best(clock) / turns * 1e6
        per_loop = full.best(clock) / turns * 1e6
        median_overhead = (full.median(clock) - base.median(clock)) / turns * 1e6
        print(f"[{clock} time, best of {len(base.cpu)} rounds]")
        print(f"  scripted model alone:  {per_base:7.1f} µs per model turn (baseline)")
        print(
            f"  loop with no-op tool:  {per_loop:7.1f} µs per iteration"
            f" ({per_loop / per_base:.1f}x baseline)"
        )
        print(
            f"  loop overhead:         {per_loop - per_base:7.1f} µs per iteration"
            f" (median {median_overhead:.1f}; target <= 100 µs)"
        )
    sizes = history_cost((10_000, 20_000))
    small, large = sizes[10_000], sizes[20_000]
    for clock in ("cpu", "wall"):
        print(f"[{clock} time, best of {len(small.cpu)} interleaved rounds]")
        print(
            f"  projection+grouping 10k: {small.best(clock) * 1e3:6.1f} ms"
            f" (median {small.median(clock) * 1e3:.1f})"
        )
        print(
            f"  projection+grouping 20k: {large.best(clock) * 1e3:6.1f} ms"
            f" (median {large.median(clock) * 1e3:.1f});"
            f" {large.best(clock) / small.best(clock):.2f}x the 10k cost"
            " (target <= 2.2x, <= 50 ms)"
        )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
