"""AG-UI binding benchmark: idle WebSocket memory, event throughput, added latency.

Run: ``python bench/agui_bench.py`` (results go in ``docs/benchmarks/agui.md``).

Each figure is measured against a baseline in the same run, on the same uvicorn, over
loopback, with the server in its own process (so its RSS is its own):

- **idle connections**: RSS growth of the server per open, idle WebSocket on
  ``/agui/{agent}/ws`` vs. a bare Starlette WebSocket endpoint that only accepts;
- **throughput**: AG-UI events per second delivered to one client by one run whose model
  streams text deltas as fast as it can, vs. a bare endpoint sending the same number of
  pre-serialized frames;
- **added latency**: from the moment the model yields a chunk (``time.monotonic_ns``,
  shared by the processes of one machine) to the moment the client has the frame, vs. the
  bare endpoint stamping and sending a frame; the difference of the medians is what the
  binding adds (loop, codec, encoder, queue, JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IDLE_CONNECTIONS = 1000
STREAM_EVENTS = 20_000
TICKS = 400
TICK_SECONDS = 0.002


# ------------------------------------------------------------------ servers


class BenchModel:
    """``stream N``: N text deltas at once; ``tick N``: N stamped deltas, one per tick."""

    async def stream(self, request):
        from interlock.transcript import (
            PartDelta,
            PartFinished,
            PartStarted,
            ResponseFinished,
            ResponseStarted,
            TextPart,
        )

        command, count = request.messages[-1].text.split()
        yield ResponseStarted()
        yield PartStarted(index=0, part=TextPart(text=""))
        for _ in range(int(count)):
            if command == "tick":
                await asyncio.sleep(TICK_SECONDS)
                yield PartDelta(index=0, delta=f"{time.monotonic_ns()} ")
            else:
                yield PartDelta(index=0, delta="x")
        yield PartFinished(index=0, part=TextPart(text="(done)"))
        yield ResponseFinished(finish_reason="stop")


def agui_app():
    from starlette.applications import Starlette

    from interlock.core_loop import Agent
    from interlock.gateway.agui import AgentRuntime, AguiBinding, RunContext, binding_routes
    from interlock.gateway.auth import KeyRing
    from interlock.gateway.stores import open_store

    runtime = AgentRuntime(
        name="bench",
        agent=Agent(model="bench"),
        model=BenchModel(),
        approval_style="interrupt",
        provider="openai",
    )
    binding = AguiBinding(
        agents={"bench": runtime},
        context=RunContext(store=open_store("memory://"), seal_key=b"b" * 32),
        keys=KeyRing(()),
    )
    return Starlette(routes=binding_routes(binding))


def baseline_app():
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    frame = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"})

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                text = await websocket.receive_text()
                command, count = json.loads(text)["messages"][-1]["content"].split()
                for _ in range(int(count)):
                    if command == "tick":
                        await asyncio.sleep(TICK_SECONDS)
                        stamped = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}
                        stamped["delta"] = f"{time.monotonic_ns()} "
                        await websocket.send_text(json.dumps(stamped))
                    else:
                        await websocket.send_text(frame)
                await websocket.send_text(json.dumps({"type": "RUN_FINISHED"}))
        except WebSocketDisconnect:
            return

    return Starlette(routes=[WebSocketRoute("/agui/{agent}/ws", endpoint)])


def serve(kind: str, port: int) -> None:
    import uvicorn

    app = agui_app() if kind == "agui" else baseline_app()
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="error",
        ws=os.environ.get("AGUI_BENCH_WS", "auto"),
        ws_ping_interval=None,
    )


# ------------------------------------------------------------------ client


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Process:
    def __init__(self, kind: str, port: int) -> None:
        self.port = port
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", kind, "--port", str(port)], cwd=ROOT
        )

    async def ready(self) -> None:
        for _ in range(400):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.025)
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def body(text: str) -> str:
    run = f"run-{time.monotonic_ns()}"
    message = {"id": run, "role": "user", "content": text}
    return json.dumps({"threadId": run, "runId": run, "messages": [message]})


async def frames(connection) -> AsyncIterator[dict]:
    while True:
        frame = json.loads(await connection.recv())
        yield frame
        if frame["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            return


async def idle_memory(url: str, pid: int) -> float:
    from websockets.asyncio.client import connect

    warm = await connect(url)
    await asyncio.sleep(0.3)
    before = rss_kib(pid)
    connections = [await connect(url) for _ in range(IDLE_CONNECTIONS)]
    await asyncio.sleep(1.0)
    after = rss_kib(pid)
    for connection in [warm, *connections]:
        await connection.close()
    return (after - before) / IDLE_CONNECTIONS


async def throughput(url: str) -> float:
    from websockets.asyncio.client import connect

    async with connect(url, max_size=None) as connection:
        await connection.send(body("stream 200"))
        async for _ in frames(connection):
            pass
        started = time.perf_counter()
        await connection.send(body(f"stream {STREAM_EVENTS}"))
        count = 0
        async for _ in frames(connection):
            count += 1
        return count / (time.perf_counter() - started)


async def latency(url: str) -> list[float]:
    from websockets.asyncio.client import connect

    samples: list[float] = []
    async with connect(url) as connection:
        await connection.send(body(f"tick {TICKS}"))
        async for frame in frames(connection):
            now = time.monotonic_ns()
            if frame["type"] == "TEXT_MESSAGE_CONTENT" and frame["delta"].strip().isdigit():
                samples.append((now - int(frame["delta"])) / 1e6)
    return samples


async def measure(kind: str, port: int) -> dict[str, float]:
    server = Process(kind, port)
    try:
        await server.ready()
        url = f"ws://127.0.0.1:{port}/agui/bench/ws"
        memory = await idle_memory(url, server.process.pid)
        rate = await throughput(url)
        samples = sorted(await latency(url))
        return {
            "kib_per_connection": memory,
            "events_per_second": rate,
            "latency_p50_ms": statistics.median(samples),
            "latency_p99_ms": samples[int(len(samples) * 0.99) - 1],
        }
    finally:
        server.stop()


async def main() -> None:
    baseline = await measure("baseline", 8911)
    agui = await measure("agui", 8912)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loopback, uvicorn + websockets")
    print(f"{'metric':<28}{'baseline':>12}{'agui':>12}{'ratio':>10}")
    for key in baseline:
        ratio = agui[key] / baseline[key] if baseline[key] else float("nan")
        print(f"{key:<28}{baseline[key]:>12.2f}{agui[key]:>12.2f}{ratio:>10.2f}")
    added = agui["latency_p50_ms"] - baseline["latency_p50_ms"]
    print(f"added latency p50 (agui - baseline): {added:.3f} ms")
    print(f"idle connections: {IDLE_CONNECTIONS}; events per run: {STREAM_EVENTS}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=["agui", "baseline"])
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(arguments.serve, arguments.port)
    else:
        asyncio.run(main())
