"""AG-UI binding benchmark: idle WebSocket memory, event throughput, added latency, and
what a client that stops reading costs the server.

Run: ``python bench/agui_bench.py [--before DIR] [--loop asyncio|uvloop]`` (results go in
``docs/benchmarks/agui.md``). ``--before`` names a checkout (e.g. ``git archive`` of an
older commit) whose binding is measured in the same run, for before/after figures;
``--loop`` picks uvicorn's event loop (default ``auto``: uvloop when installed, as with
``uvicorn[standard]``).

Every server runs in its own process (uvicorn, loopback), so its RSS is its own; all
are up at once and take turns, round after round, so a change in the machine's load
during the run hits every configuration alike. The configurations:

- ``bare/stock``: a bare Starlette WebSocket endpoint that accepts and sends
  pre-serialized frames, one ``send_text`` each, on stock uvicorn (``ws="auto"``, i.e.
  ``websockets-sansio``, per-message deflate on);
- ``agui/stock``: the AG-UI binding on stock uvicorn;
- ``agui/plain``: the same with per-message deflate off, to tell its share apart;
- ``bare/lean`` and ``agui/lean``: the same on the gateway's ``SERVER_OPTIONS`` (the lean
  protocol, no per-message deflate), which is how ``interlock serve`` runs.

Measurements:

- **idle**: RSS growth per open, idle, accepted WebSocket (1,000 of them; the RSS before
  is taken in the same server with one socket open);
- **throughput**: AG-UI events per second delivered to one ``websockets`` client by one
  run whose model streams 20,000 text deltas as fast as it can (median of 5 rounds), and
  the server's CPU time per event over those runs (user + system, from ``/proc``: far
  less sensitive to a loaded machine than wall time); the same rate again for a minimal
  client that only splits frames (``raw_events_per_second``: less client work);
- **latency**: model chunk (``time.monotonic_ns``, shared by the processes of one
  machine) → frame in the client, 400 chunks 2 ms apart (5 rounds of 80); p50 and p99;
- **stalled client** (binding only): RSS growth of the server 1 s and 3 s into a
  200,000-event run whose client does not read (bounded: the two are about equal).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

IDLE_CONNECTIONS = 1000
STREAM_EVENTS = 20_000
STALL_EVENTS = 200_000
TICKS = 400
ROUNDS = 5
TICK_SECONDS = 0.002
CONFIGS = ("bare/stock", "agui/stock", "agui/plain", "bare/lean", "agui/lean")


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


def bare_app():
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


def serve(config: str, port: int, loop: str) -> None:
    import uvicorn

    app_kind, server_kind = config.split("/")
    options = {}
    if server_kind == "lean":
        options = dict(importlib.import_module("interlock.gateway.agui").SERVER_OPTIONS)
    elif server_kind == "plain":
        options = {"ws_per_message_deflate": False}
    app = agui_app() if app_kind == "agui" else bare_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", loop=loop, **options)


# ------------------------------------------------------------------ client


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Process:
    def __init__(self, config: str, port: int, root: Path, loop: str) -> None:
        self.port = port
        self.url = f"ws://127.0.0.1:{port}/agui/bench/ws"
        environment = {**os.environ, "PYTHONPATH": str(root)}
        command = [sys.executable, __file__, "--serve", config, "--port", str(port)]
        command += ["--loop", loop]
        self.process = subprocess.Popen(command, cwd=root, env=environment)

    async def ready(self) -> None:
        for _ in range(800):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.025)
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        """Stop the server; kill it if it has not wound down after 30 s (an unbounded
        queue left by a stalled client can take that long to drain)."""
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            print(f"server on port {self.port} did not stop in 30 s: killed", flush=True)
            self.process.kill()
            self.process.wait()


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
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    connections = [await connect(url) for _ in range(IDLE_CONNECTIONS)]
    await asyncio.sleep(1.0)
    after = rss_kib(pid)
    for connection in [warm, *connections]:
        await connection.close()
    return (after - before) / IDLE_CONNECTIONS


async def stream_rate(connection) -> float:
    """Events/s of one 20,000-delta run on an open ``websockets`` connection."""
    started = time.perf_counter()
    await connection.send(body(f"stream {STREAM_EVENTS}"))
    count = 0
    async for _ in frames(connection):
        count += 1
    return count / (time.perf_counter() - started)


async def raw_connection(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket opened by hand, for a client that only splits frames."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"GET /agui/bench/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n\r\n"
    )
    await reader.readuntil(b"\r\n\r\n")
    return reader, writer


async def raw_rate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> float:
    """Events/s of one 20,000-delta run to the frame-splitting client."""
    payload = body(f"stream {STREAM_EVENTS}").encode()
    mask = b"\x00\x00\x00\x00"  # a client must mask; a zero mask leaves the bytes as they are
    header = bytes((0x81, 0x80 | 126)) + len(payload).to_bytes(2, "big") + mask
    started = time.perf_counter()
    writer.write(header + payload)
    count = await _count_frames(reader, writer)
    return count / (time.perf_counter() - started)


_RUN_FINISHED = (b'{"type":"RUN_FINISHED"', b'{"type": "RUN_FINISHED"')


async def _count_frames(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> int:
    """Text frames up to the one that ends the run, parsed from large reads; pings are
    answered (uvicorn closes a socket whose pings go unanswered)."""
    count, buffer, position = 0, b"", 0
    while True:
        data = await reader.read(1 << 18)
        if not data:
            raise ConnectionError("the server closed the socket")
        buffer, position = buffer[position:] + data, 0
        while len(buffer) - position >= 2:
            opcode, size, start = buffer[position] & 0x0F, buffer[position + 1] & 0x7F, position + 2
            if size >= 126:
                width = 2 if size == 126 else 8
                if len(buffer) < start + width:
                    break
                size = int.from_bytes(buffer[start : start + width], "big")
                start += width
            if len(buffer) < start + size:
                break
            position = start + size
            if opcode == 0x9:  # ping → pong with the same payload (masked with zeros)
                writer.write(bytes((0x8A, 0x80 | size)) + b"\x00" * 4 + buffer[start:position])
            elif opcode == 0x1:
                count += 1
                if buffer.startswith(_RUN_FINISHED, start, position):
                    return count


async def latency(connection, ticks: int) -> list[float]:
    """Chunk-to-client delays (ms) of one run of ``ticks`` stamped deltas."""
    samples: list[float] = []
    await connection.send(body(f"tick {ticks}"))
    async for frame in frames(connection):
        now = time.monotonic_ns()
        if frame["type"] == "TEXT_MESSAGE_CONTENT" and frame["delta"].strip().isdigit():
            samples.append((now - int(frame["delta"])) / 1e6)
    return samples


async def stalled_client(url: str, pid: int) -> tuple[float, float]:
    """RSS growth (KiB) 1 s and 3 s into a long run whose client reads nothing."""
    from websockets.asyncio.client import connect

    connection = await connect(url, max_size=None)
    await asyncio.sleep(0.3)
    before = rss_kib(pid)
    await connection.send(body(f"stream {STALL_EVENTS}"))
    await asyncio.sleep(1.0)
    early = rss_kib(pid) - before
    await asyncio.sleep(2.0)
    late = rss_kib(pid) - before
    connection.transport.abort()
    await asyncio.sleep(0.2)  # let the loop really close the socket before moving on
    return float(early), float(late)


async def interleaved(servers: dict[str, Process]) -> dict[str, dict[str, float]]:
    """Throughput and latency, the servers taking turns round after round, so a change in
    the machine's load during the run hits every configuration alike."""
    from websockets.asyncio.client import connect

    results: dict[str, dict[str, float]] = {name: {} for name in servers}
    sockets = {
        name: await connect(f"{server.url}", max_size=None) for name, server in servers.items()
    }
    raw = {name: await raw_connection(server.port) for name, server in servers.items()}
    rates: dict[str, list[float]] = {name: [] for name in servers}
    raw_rates: dict[str, list[float]] = {name: [] for name in servers}
    delays: dict[str, list[float]] = {name: [] for name in servers}
    for name in servers:  # warm-up
        await latency(sockets[name], 20)
    cpu = {name: cpu_seconds(server.process.pid) for name, server in servers.items()}
    for round_number in range(ROUNDS):
        progress(f"throughput round {round_number + 1}")
        for name in servers:
            rates[name].append(await stream_rate(sockets[name]))
    for name, server in servers.items():
        spent = cpu_seconds(server.process.pid) - cpu[name]
        results[name]["events_per_second"] = statistics.median(rates[name])
        results[name]["server_cpu_us_per_event"] = spent / (ROUNDS * STREAM_EVENTS) * 1e6
    for round_number in range(ROUNDS):
        progress(f"raw client and latency round {round_number + 1}")
        for name in servers:
            raw_rates[name].append(await raw_rate(*raw[name]))
            delays[name] += await latency(sockets[name], TICKS // ROUNDS)
    for name in servers:
        samples = sorted(delays[name])
        results[name]["raw_events_per_second"] = statistics.median(raw_rates[name])
        results[name]["latency_p50_ms"] = statistics.median(samples)
        results[name]["latency_p99_ms"] = samples[int(len(samples) * 0.99) - 1]
        await sockets[name].close()
        raw[name][1].close()
    return results


async def main(before: Path | None, loop: str) -> None:
    load = os.getloadavg()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loop {loop}, load {load[0]:.1f}"
    )
    servers: dict[str, Process] = {}
    if before is not None:
        servers["agui/stock@before"] = Process("agui/stock", 8910, before, loop)
    for port, config in enumerate(CONFIGS, start=8911):
        servers[config] = Process(config, port, ROOT, loop)
    try:
        for server in servers.values():
            await server.ready()
        progress("idle sockets")
        idle = {
            name: await idle_memory(server.url, server.process.pid)
            for name, server in servers.items()
        }
        results = await interleaved(servers)
        for name, server in servers.items():
            results[name] = {"idle_kib_per_socket": idle[name], **results[name]}
            if name.startswith("agui"):
                progress(f"stalled client on {name}")
                early, late = await stalled_client(server.url, server.process.pid)
                results[name]["stalled_client_rss_kib_1s"] = early
                results[name]["stalled_client_rss_kib_3s"] = late
    finally:
        for server in servers.values():
            server.stop()
    report(results)
    load = os.getloadavg()
    print(f"load after: {load[0]:.1f}; idle sockets {IDLE_CONNECTIONS}; events {STREAM_EVENTS}")


def report(results: dict[str, dict[str, float]]) -> None:
    names = list(results)
    keys = list(dict.fromkeys(key for result in results.values() for key in result))
    print(f"{'metric':<26}" + "".join(f"{name:>18}" for name in names))
    for key in keys:
        cells = [f"{results[n][key]:>18.2f}" if key in results[n] else f"{'-':>18}" for n in names]
        print(f"{key:<26}" + "".join(cells))
    pairs = [("bare/stock", "agui/stock"), ("bare/lean", "agui/lean"), ("bare/stock", "agui/lean")]
    for base, name in [(b, n) for b, n in pairs if b in results and n in results]:
        ratios = ", ".join(
            f"{key} {results[name][key] / results[base][key]:.2f}"
            for key in ("idle_kib_per_socket", "events_per_second", "server_cpu_us_per_event")
        )
        added = results[name]["latency_p50_ms"] - results[base]["latency_p50_ms"]
        print(f"{name} / {base}: {ratios}; added latency p50 {added:+.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=CONFIGS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"])
    arguments = parser.parse_args()
    if arguments.serve:
        sys.path.insert(0, os.getcwd())
        serve(arguments.serve, arguments.port, arguments.loop)
    else:
        asyncio.run(main(arguments.before, arguments.loop))
