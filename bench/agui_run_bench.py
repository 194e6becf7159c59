"""Server CPU of one AG-UI run whose model streams from an HTTP upstream, SSE and WebSocket.

A Chat emulator (`interlock emulate --script`) answers every model call with the same
stream of ``--chunks`` text deltas; `interlock serve` (one worker, memory or SQLite store)
runs an agent on it. Each run is a new thread with one user message, so a run emits
RUN_STARTED, TEXT_MESSAGE_START, one TEXT_MESSAGE_CONTENT per delta, TEXT_MESSAGE_END,
MESSAGES_SNAPSHOT and RUN_FINISHED (25 events with 20 deltas). The figure is the
gateway's own CPU time per run (every thread of the process, from
``/proc/<pid>/task/*/schedstat``), runs sent one at a time by a cheap client (a raw
socket for SSE, the ``websockets`` sync client for WebSocket, one socket for all runs).

``--baseline DIR`` measures another checkout's gateway in the same rounds, interleaved.

``--agent-framework PYTHON`` adds Microsoft Agent Framework as a peer in the same rounds:
``bench/agent_framework_peer.py`` run by ``PYTHON`` (a separate virtual environment with
agent-framework-core, agent-framework-ag-ui, agent-framework-openai and uvicorn), once with
its OpenAI Chat client on the same emulator (``af-http``) and once with its model scripted
in-process (``af-scripted``). Its AG-UI endpoint is SSE only, so it is in the SSE rounds
only. Each contestant's event types for one run are printed first, to show the runs match;
each SSE line ends with Agent Framework's CPU over Interlock's. With ``--callgrind`` the
peers run under valgrind too.

``--callgrind N`` measures instead what does not depend on the machine's load: each
gateway runs under ``valgrind --tool=callgrind`` (instrumentation off until warmed up) and
the figure is user-space instructions per run over ``N`` runs (kernel work, such as the
socket writes, is not counted). Runs are ~50× slower there, so a run-log flush timer
(50 ms) fires in runs it would not reach natively: compare checkouts, not absolutes.

``--thread-runs N`` runs ``N`` runs on one thread per contestant instead (each run sends
only its new user message, so the thread, the model's history and the snapshot grow by two
messages a run) and prints CPU per run for each block of ``--block`` runs, contestants
alternating block by block; with ``--callgrind`` the instructions per run of the first and
the last block. Last ÷ first says how a run's cost grows with its thread.

Usage: python bench/agui_run_bench.py [--runs 200] [--rounds 5] [--chunks 20]
       [--store memory|sqlite] [--baseline DIR] [--callgrind N] [--agent-framework PYTHON]
       [--thread-runs N [--block 20]]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import history_callgrind as callgrind
import proxy_bench as pb
from history_bench import cpu_ns
from websockets.sync.client import connect


def script(entries: int, chunks: int) -> list[object]:
    """``entries`` identical Chat streams of ``chunks`` text deltas each."""
    head = {"id": "chatcmpl-b", "object": "chat.completion.chunk", "created": 1, "model": "M"}

    def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": f"word{index} "}) for index in range(chunks)]
    events.append(chunk({}, "stop"))
    return [{"stream": events} for _ in range(entries)]


def config_text(port: int, store: str) -> str:
    return f"""
[store]
url = "{store}"
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "http://127.0.0.1:{port}/v1"
[[models]]
name = "m"
upstream = "chat"
model = "M"
[[agents]]
name = "bench"
model = "m"
instructions = "Answer briefly."
"""


def run_input(number: int, thread: str | None = None) -> bytes:
    """Run ``number``'s input: one new user message, on a new thread unless ``thread``."""
    return json.dumps(
        {
            "threadId": thread or f"thread-{number}-{time.monotonic_ns()}",
            "runId": f"run-{number}",
            "state": {},
            "messages": [{"id": f"u{number}", "role": "user", "content": "hello there"}],
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
    ).encode()


class SseClient:
    """One keep-alive connection posting runs and reading each SSE body to its end."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = pb.Connection(port)

    def run(self, number: int, thread: str | None = None) -> int:
        try:
            return self.connection.post("/agui/bench", run_input(number, thread)).events
        except ConnectionError:  # closed while idle (75 s: a block under valgrind can outlast it)
            self.connection.close()
            self.connection = pb.Connection(self.port)
            return self.connection.post("/agui/bench", run_input(number, thread)).events

    def close(self) -> None:
        self.connection.close()


class WebSocketClient:
    """One WebSocket carrying every run, one after another."""

    def __init__(self, port: int) -> None:
        url = f"ws://127.0.0.1:{port}/agui/bench/ws"
        self.socket = connect(url, compression=None).__enter__()

    def run(self, number: int, thread: str | None = None) -> int:
        self.socket.send(run_input(number, thread).decode())
        events = 0
        while True:
            frame = json.loads(self.socket.recv())
            events += 1
            if frame["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                if frame["type"] == "RUN_ERROR":
                    raise RuntimeError(frame)
                return events

    def close(self) -> None:
        self.socket.close()


@dataclass
class Gateway:
    name: str
    port: int
    pid: int
    transports: tuple[str, ...] = ("sse", "ws")


def open_client(gateway: Gateway, transport: str) -> SseClient | WebSocketClient:
    return SseClient(gateway.port) if transport == "sse" else WebSocketClient(gateway.port)


def measure(gateway: Gateway, transport: str, runs: int, first: int) -> tuple[float, float, int]:
    """(CPU ms per run, wall ms per run, events per run) over ``runs`` runs after warm-up."""
    client = open_client(gateway, transport)
    try:
        for number in range(first, first + 10):
            client.run(number)
        started, begun = cpu_ns(gateway.pid), time.perf_counter()
        events = 0
        for number in range(first + 10, first + 10 + runs):
            events = client.run(number)
        wall = (time.perf_counter() - begun) / runs * 1000
        return (cpu_ns(gateway.pid) - started) / runs / 1e6, wall, events
    finally:
        client.close()


def start(
    arguments: list[str], work: Path, source: str | None, prefix: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    environment = dict(os.environ)
    if source is not None:
        environment["PYTHONPATH"] = source
    log = (work / f"{arguments[0]}-{time.monotonic_ns()}.log").open("wb")
    return subprocess.Popen(
        [*prefix, *pb.INTERLOCK, *arguments], cwd=work, env=environment, stdout=log, stderr=log
    )


def instructions(gateway: Gateway, transport: str, runs: int, first: int, work: Path) -> float:
    """Millions of user-space instructions per run (callgrind), after a warm-up."""
    client = open_client(gateway, transport)
    try:
        for number in range(first, first + 20):
            client.run(number)
        callgrind.control(gateway.pid, "-i", "on")
        for number in range(first + 20, first + 30):
            client.run(number)
        callgrind.control(gateway.pid, "-z")
        for number in range(first + 30, first + 30 + runs):
            client.run(number)
        callgrind.control(gateway.pid, "-d")
        callgrind.control(gateway.pid, "-i", "off")
    finally:
        client.close()
    return callgrind.dumped(work, gateway.name) / runs / 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--baseline", help="another checkout's gateway, measured alongside")
    parser.add_argument("--callgrind", type=int, help="instructions per run over N runs")
    parser.add_argument("--agent-framework", metavar="PYTHON", help="add the Agent Framework peer")
    parser.add_argument("--thread-runs", type=int, help="N runs on one thread: first vs last")
    parser.add_argument("--block", type=int, default=20, help="runs per block (--thread-runs)")
    arguments = parser.parse_args()
    if arguments.callgrind:  # a run under valgrind on a loaded machine can take many seconds
        socket.setdefaulttimeout(600)
    if arguments.agent_framework:
        check_peer(arguments.agent_framework)
    work = Path(tempfile.mkdtemp(prefix="interlock-agui-run-bench-"))
    sources = [("now", None)] + ([("base", arguments.baseline)] if arguments.baseline else [])
    per_source = max(
        (arguments.runs + 10) * arguments.rounds,
        (arguments.callgrind or 0) + 30,
        (arguments.thread_runs or 0) + 30,
    )
    total = per_source * 2 * (len(sources) + 1) + 10
    (work / "script.json").write_text(json.dumps(script(total, arguments.chunks)))
    emulator_port = pb.free_port()
    emulate = ["emulate", "--protocol", "openai-chat", "--port", str(emulator_port)]
    processes = [start([*emulate, "--script", str(work / "script.json")], work, None)]
    pb.wait_healthy(emulator_port, "/", processes[0])
    gateways: list[Gateway] = []
    try:
        for name, source in sources:
            store = "memory://" if arguments.store == "memory" else f"sqlite:///{work}/{name}.db"
            config = work / f"{name}.toml"
            config.write_text(config_text(emulator_port, store))
            port = pb.free_port()
            serve = ["serve", "--config", str(config), "--port", str(port)]
            prefix = callgrind.prefix(work, name) if arguments.callgrind else ()
            process = start(serve, work, source, prefix)
            processes.append(process)
            pb.wait_healthy(port, "/healthz", process, timeout=600 if prefix else 120)
            gateways.append(Gateway(name, port, process.pid))
        if arguments.agent_framework:
            peers = start_peers(arguments, emulator_port, work)
            processes += [process for process, _ in peers]
            gateways += [gateway for _, gateway in peers]
        if arguments.thread_runs:
            long_thread_report(gateways, arguments, work)
        elif arguments.callgrind:
            callgrind_report(gateways, arguments.callgrind, work)
        else:
            report(gateways, arguments)
    finally:
        for process in processes:
            pb.stop(process)
    return 0


PEER = Path(__file__).with_name("agent_framework_peer.py")


def check_peer(python: str) -> None:
    """Exit with the peer's own message when ``python`` cannot run Agent Framework."""
    found = subprocess.run([python, str(PEER), "--check"], capture_output=True, text=True)
    if found.returncode != 0:
        raise SystemExit(f"--agent-framework {python}: {found.stderr.strip() or found.returncode}")
    print(f"Agent Framework peer: {found.stdout.strip()}", flush=True)


def start_peers(
    arguments: argparse.Namespace, emulator_port: int, work: Path
) -> list[tuple[subprocess.Popen[bytes], Gateway]]:
    """The Agent Framework peer with its model over HTTP (the emulator) and scripted."""
    modes = {
        "af-http": ["--upstream", f"http://127.0.0.1:{emulator_port}/v1"],
        "af-scripted": ["--scripted", "--chunks", str(arguments.chunks)],
    }
    peers: list[tuple[subprocess.Popen[bytes], Gateway]] = []
    for name, mode in modes.items():
        port = pb.free_port()
        log = (work / f"{name}.log").open("wb")
        prefix = callgrind.prefix(work, name) if arguments.callgrind else ()
        command = [*prefix, arguments.agent_framework, str(PEER), "--port", str(port), *mode]
        process = subprocess.Popen(command, cwd=work, stdout=log, stderr=log)
        peers.append((process, Gateway(name, port, process.pid, ("sse",))))
        pb.wait_healthy(port, "/healthz", process, timeout=600 if prefix else 120)
    return peers


def event_types(gateway: Gateway, number: int) -> list[str]:
    """The ``type`` of every SSE event of one run, in order."""
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port)
    try:
        headers = {"content-type": "application/json"}
        connection.request("POST", "/agui/bench", run_input(number), headers)
        body = connection.getresponse().read().decode()
    finally:
        connection.close()
    lines = [line[5:] for line in body.splitlines() if line.startswith("data:")]
    return [str(json.loads(line)["type"]) for line in lines]


def describe(gateways: list[Gateway]) -> None:
    """Print each contestant's event sequence for one run (runs of CONTENT folded)."""
    for index, gateway in enumerate(gateways):
        kinds = event_types(gateway, 1_000_000 + index)
        folded = [(kind, len(list(same))) for kind, same in itertools.groupby(kinds)]
        text = ", ".join(kind if count == 1 else f"{kind} ×{count}" for kind, count in folded)
        print(f"{gateway.name}: {len(kinds)} events: {text}", flush=True)


def callgrind_report(gateways: list[Gateway], runs: int, work: Path) -> None:
    first = 0
    for transport in ("sse", "ws"):
        line = f"{transport:<4} user-space instructions per run ({runs} runs, callgrind)"
        for gateway in [gateway for gateway in gateways if transport in gateway.transports]:
            line += (
                f" | {gateway.name}: {instructions(gateway, transport, runs, first, work):.3f} M"
            )
            first += runs + 30
        print(line, flush=True)


def long_thread_report(gateways: list[Gateway], arguments: argparse.Namespace, work: Path) -> None:
    """``--thread-runs N``: every contestant runs ``N`` runs on one thread of its own (each
    run sends only its new user message; the thread, its snapshot and the model's history
    grow by two messages a run), in blocks of ``--block`` runs, contestants alternating
    block by block. CPU per run of each block, or with ``--callgrind`` the instructions
    per run of the first and the last block; then last ÷ first."""
    print(f"load average at start {pb.load_average()}; store {arguments.store}", flush=True)
    runs, block = arguments.thread_runs, arguments.block
    for transport in ("sse", "ws"):
        contestants = [gateway for gateway in gateways if transport in gateway.transports]
        clients = {gateway.name: open_client(gateway, transport) for gateway in contestants}
        threads = {
            gateway.name: f"long-{transport}-{time.monotonic_ns()}" for gateway in contestants
        }
        figures: dict[str, list[float]] = {gateway.name: [] for gateway in contestants}
        number = itertools.count(2_000_000 + (0 if transport == "sse" else 1_000_000))
        try:
            for gateway in contestants:  # warm-up on threads of their own
                for _ in range(10):
                    clients[gateway.name].run(next(number))
            for index in range(runs // block):
                order = contestants if index % 2 == 0 else contestants[::-1]
                for gateway in order:
                    counted = arguments.callgrind and index in (0, runs // block - 1)
                    if arguments.callgrind and not counted:
                        for _ in range(block):
                            clients[gateway.name].run(next(number), threads[gateway.name])
                        continue
                    if counted:
                        callgrind.control(gateway.pid, "-i", "on")
                        callgrind.control(gateway.pid, "-z")
                    started = cpu_ns(gateway.pid)
                    for _ in range(block):
                        clients[gateway.name].run(next(number), threads[gateway.name])
                    if counted:
                        callgrind.control(gateway.pid, "-d")
                        callgrind.control(gateway.pid, "-i", "off")
                        used = callgrind.dumped(work, gateway.name) / block / 1e6
                    else:
                        used = (cpu_ns(gateway.pid) - started) / block / 1e6
                    figures[gateway.name].append(used)
        finally:
            for client in clients.values():
                client.close()
        unit = "M instructions" if arguments.callgrind else "ms CPU"
        for gateway in contestants:
            values = figures[gateway.name]
            shown = ", ".join(f"{value:.2f}" for value in values)
            print(
                f"{transport:<4} {gateway.name}: {unit} per run by block of {block} runs on one "
                f"thread ({shown}); last ÷ first {values[-1] / values[0]:.2f}×   "
                f"[load {pb.load_average()}]",
                flush=True,
            )


def report(gateways: list[Gateway], arguments: argparse.Namespace) -> None:
    print(f"load average at start {pb.load_average()}; store {arguments.store}", flush=True)
    describe(gateways)
    for transport in ("sse", "ws"):
        contestants = [gateway for gateway in gateways if transport in gateway.transports]
        cpu: dict[str, list[float]] = {gateway.name: [] for gateway in contestants}
        wall: dict[str, list[float]] = {gateway.name: [] for gateway in contestants}
        events: dict[str, int] = {}
        first = 0
        for round_index in range(arguments.rounds):
            order = contestants if round_index % 2 == 0 else contestants[::-1]
            for gateway in order:
                used, elapsed, events[gateway.name] = measure(
                    gateway, transport, arguments.runs, first
                )
                first += arguments.runs + 10
                cpu[gateway.name].append(used)
                wall[gateway.name].append(elapsed)
        line = f"{transport:<4}"
        for gateway in contestants:
            runs = ", ".join(f"{value:.2f}" for value in cpu[gateway.name])
            line += (
                f" | {gateway.name}: {events[gateway.name]} events, "
                f"CPU {statistics.median(cpu[gateway.name]):.3f} ms/run "
                f"({runs}), wall {statistics.median(wall[gateway.name]):.2f} ms/run"
            )
        print(f"{line}   [load {pb.load_average()}]", flush=True)
        peers = [name for name in cpu if name.startswith("af-")]
        if peers:
            print(f"{transport:<4} Agent Framework ÷ now (CPU): {ratios(cpu, peers)}", flush=True)


def ratios(cpu: dict[str, list[float]], peers: list[str]) -> str:
    """Each peer's median CPU over ``now``'s, then the range of the ratios round by round
    (a round's contestants ran back to back, so they saw about the same load)."""
    texts: list[str] = []
    for name in peers:
        overall = statistics.median(cpu[name]) / statistics.median(cpu["now"])
        rounds = [peer / now for peer, now in zip(cpu[name], cpu["now"], strict=True)]
        texts.append(f"{name} {overall:.2f}× (rounds {min(rounds):.2f}–{max(rounds):.2f}×)")
    return ", ".join(texts)


if __name__ == "__main__":
    socket.setdefaulttimeout(60)
    raise SystemExit(main())
