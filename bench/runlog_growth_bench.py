"""What an AG-UI run costs the store as runs accumulate: one process, in-process CPU.

Each run is what the gateway does to the store for a new thread's run, minus the model:
open the run's log, append 26 frames, save the thread, close the log. Blocks of runs on
new threads follow one another in one process; the figure is this thread's CPU time per
run in each block (``time.thread_time``), so a cost that grows with the runs served
shows as a rising row. ``--baseline DIR`` runs the same in another checkout (a child
process with that ``PYTHONPATH``).

Usage: python bench/runlog_growth_bench.py [--blocks 10] [--runs 1000]
       [--store memory|sqlite] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

FRAMES = ['{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"word "}'] * 26


async def measure(blocks: int, runs: int, url: str) -> list[float]:
    """Microseconds of CPU per run, block by block."""
    from interlock.gateway.stores import RunKey, RunLog, ThreadRecord, open_store

    store = open_store(url)
    log = RunLog(store.backend)
    figures: list[float] = []
    number = 0
    try:
        for _ in range(blocks):
            started = time.thread_time()
            for _ in range(runs):
                thread = f"thread-{number}"
                writer = await log.open(RunKey("tenant", thread, f"run-{number}"))
                writer.append(FRAMES)
                await store.save_thread("tenant", thread, ThreadRecord())
                await writer.close()
                number += 1
            figures.append((time.thread_time() - started) / runs * 1e6)
    finally:
        await store.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--baseline", help="another checkout, measured after this one")
    parser.add_argument("--name", default="now")
    arguments = parser.parse_args()
    url = "memory://"
    if arguments.store == "sqlite":
        url = f"sqlite:///{tempfile.mkdtemp(prefix='interlock-runlog-growth-')}/state.db"
    figures = asyncio.run(measure(arguments.blocks, arguments.runs, url))
    row = " ".join(f"{value:.0f}" for value in figures)
    print(f"{arguments.name}: µs of CPU per run, blocks of {arguments.runs}: {row}", flush=True)
    if arguments.baseline:
        command = [sys.executable, __file__, "--name", "base", "--store", arguments.store]
        command += ["--blocks", str(arguments.blocks), "--runs", str(arguments.runs)]
        subprocess.run(command, check=True, env=dict(os.environ, PYTHONPATH=arguments.baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
