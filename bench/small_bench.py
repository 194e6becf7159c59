"""A small Chat request through the gateway: added latency, server CPU and instructions.

Same processes as ``bench/history_bench.py`` (two emulators, ``interlock serve`` on loopback,
one worker, access log on and written to a file), a one-message Chat request, Chat → Chat
("same") and Chat → Responses ("cross"). Three drivers, because what a request costs depends
on how the server is driven:

* **one at a time** (``history_bench``'s pairs): a raw-socket client sends a request, waits for
  the answer, then calls the emulator directly with the same history; "added" is proxied
  minus direct, CPU is the gateway's own (``/proc/<pid>/task/*/schedstat``) per request. The
  server is idle between requests, so every request pays its own wake-ups (epoll, the event
  loop's idle turn): what a user's client that sends one request at a time sees.
* **paced httpx**: ``httpx.Client`` (the auditors' driver) waits ``--gap`` ms, sends a
  request through the gateway, waits ``--gap`` ms again, then sends the same request
  straight to the emulator on a second client: both legs are paced alike, so the stub's
  and the driver's own wake-ups after a sleep are in both and "added" (the median of the
  paired differences) is the gateway's part. CPU and voluntary context switches
  (``/proc/<pid>/task/*/status``) are the gateway's, per request.
* ``wrk -t1 -c16`` (``--wrk SECONDS``): saturating, many requests per wake-up (what a busy
  gateway sees), CPU per request.

``--baseline DIR`` measures another checkout's gateway in the same rounds, interleaved.
``--floor`` adds ``bench/floor_app.py`` (uvicorn answering a fixed body, nothing else) to
the paced rounds: what the serving layer alone costs per request with the same driver.

``--callgrind N`` measures instead what does not move with the machine's load: every gateway
runs under ``valgrind --tool=callgrind`` (instrumentation off until warmed up) and the figure
is user-space instructions per request over ``N`` one-at-a-time requests, same and cross
(kernel work such as socket reads and writes is not counted). Compare checkouts, not
absolutes.

``--strace N`` counts instead the system calls each gateway makes per request: ``strace -c``
attached to every thread of a warmed-up gateway over ``N`` paced ``httpx`` requests, same
and cross.

Usage: python bench/small_bench.py [--rounds 5] [--requests 200] [--gap 2] [--wrk 5]
       [--baseline DIR] [--callgrind N] [--strace N] [--floor] [--paced-only]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import history_bench as hb
import history_callgrind as callgrind
import httpx
import proxy_bench as pb

from interlock.transcript import JsonObject

FLOOR_APP = Path(__file__).with_name("floor_app.py")
JSON = {"content-type": "application/json"}
SMALL: list[JsonObject] = [{"role": "user", "content": f"hello there {hb.MARK}"}]


@dataclass
class Paced:
    """One paced run of one gateway: paired wall times and the gateway's own counters."""

    added: list[float]
    cpu: float
    switches: float


def switches(pid: int) -> int:
    """Voluntary context switches of every thread of ``pid`` (each one a sleep)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches"):
                total += int(line.split()[1])
    return total


def paced_run(
    variant: hb.Variant, cross: bool, ports: dict[str, int], requests: int, gap: float
) -> Paced:
    """``requests`` pairs, each leg after ``gap`` s of sleep: gateway, then emulator."""
    model = "cross" if cross else "same"
    port, path = (ports["responses"], pb.RESPONSES_PATH) if cross else (ports["chat"], pb.CHAT_PATH)
    bodies = hb.bodies_for(SMALL, cross, model, "first")
    proxied_url = f"http://127.0.0.1:{variant.port}{pb.CHAT_PATH}"
    direct_url = f"http://127.0.0.1:{port}{path}"
    headers = {"content-type": "application/json"}

    def post(client: httpx.Client, url: str, body: bytes) -> float:
        time.sleep(gap)
        begun = time.perf_counter()
        answer = client.post(url, content=body, headers=headers)
        took = time.perf_counter() - begun
        if answer.status_code != 200:
            raise RuntimeError(f"HTTP {answer.status_code} from {url}: {answer.text}")
        return took

    with httpx.Client(timeout=60) as gateway, httpx.Client(timeout=60) as direct:
        for index in range(10):
            direct_body, proxy_body = bodies(1_000_000 + index)
            post(gateway, proxied_url, proxy_body)
            post(direct, direct_url, direct_body)
        started, slept = hb.cpu_ns(variant.pid), switches(variant.pid)
        added: list[float] = []
        for index in range(requests):
            direct_body, proxy_body = bodies(index)
            added.append(
                post(gateway, proxied_url, proxy_body) - post(direct, direct_url, direct_body)
            )
        cpu = (hb.cpu_ns(variant.pid) - started) / requests / 1e6
        return Paced(added, cpu, (switches(variant.pid) - slept) / requests)


def paced(variants: list[hb.Variant], ports: dict[str, int], arguments: argparse.Namespace) -> None:
    for cross in (False, True):
        serving = [variant for variant in variants if not cross or variant.name != "floor"]
        results: dict[str, list[Paced]] = {variant.name: [] for variant in serving}
        for round_index in range(arguments.rounds):
            order = serving if round_index % 2 == 0 else serving[::-1]
            for variant in order:
                run = paced_run(variant, cross, ports, arguments.requests, arguments.gap / 1000)
                results[variant.name].append(run)
        line = f"small {'cross' if cross else 'same'}, httpx paced {arguments.gap:g} ms"
        for variant in serving:
            runs = results[variant.name]
            p50 = statistics.median(statistics.median(run.added) for run in runs) * pb.MS
            p99 = statistics.median(pb.pct(run.added, 0.99) for run in runs) * pb.MS
            cpu = statistics.median(run.cpu for run in runs)
            slept = statistics.median(run.switches for run in runs)
            line += (
                f" | {variant.name}: added p50 {p50:.2f} p99 {p99:.2f} ms,"
                f" CPU {cpu:.3f} ms/req, {slept:.2f} sleeps/req"
            )
        print(f"{line}   [load {pb.load_average()}]", flush=True)


def instructions(variant: hb.Variant, model: str, requests: int, work: Path) -> float:
    """Thousands of user-space instructions per request (callgrind), after a warm-up."""
    connection = pb.Connection(variant.port)

    def send(count: int, tag: str) -> None:
        for index in range(count):
            body = hb.chat_body(SMALL, model).replace(b"#VARY#", f"{tag}{index}".encode())
            connection.post(pb.CHAT_PATH, body)

    try:
        send(30, "warm")
        callgrind.control(variant.pid, "-i", "on")
        send(10, "on")
        callgrind.control(variant.pid, "-z")
        send(requests, model)
        callgrind.control(variant.pid, "-d")
        callgrind.control(variant.pid, "-i", "off")
    finally:
        connection.close()
    return callgrind.dumped(work, variant.name) / requests / 1e3


def system_calls(
    variant: hb.Variant, cross: bool, ports: dict[str, int], requests: int, work: Path
) -> str:
    """System calls per request by name (``strace -c`` on every thread), paced ``httpx``."""
    model = "cross" if cross else "same"
    bodies = hb.bodies_for(SMALL, cross, model, "first")
    url = f"http://127.0.0.1:{variant.port}{pb.CHAT_PATH}"
    out = work / f"strace-{variant.name}-{model}.txt"
    with httpx.Client(timeout=60) as client:

        def post(count: int, offset: int) -> None:
            for index in range(count):
                time.sleep(0.002)
                answer = client.post(url, content=bodies(offset + index)[1], headers=JSON)
                if answer.status_code != 200:
                    raise RuntimeError(f"HTTP {answer.status_code}: {answer.text}")

        post(30, 1_000_000)
        tasks = [f"-p{task}" for task in os.listdir(f"/proc/{variant.pid}/task")]
        command = ["strace", "-c", "-o", str(out), *tasks]
        tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # attached
        post(requests, 0)
        tracer.send_signal(signal.SIGINT)
        tracer.wait(60)
    counts: dict[str, int] = {}
    for line in out.read_text().splitlines()[2:]:
        fields = line.split()
        if len(fields) >= 5 and fields[3].isdigit() and fields[-1] != "total":
            counts[fields[-1]] = int(fields[3])
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    total = sum(counts.values()) / requests
    return (
        f"{total:.2f} ("
        + ", ".join(f"{name} {count / requests:.2f}" for name, count in ranked)
        + ")"
    )


def start(
    config: Path, port: int, work: Path, source: str | None, prefix: tuple[str, ...]
) -> subprocess.Popen[bytes]:
    """``interlock serve``; its access lines (on, as by default) go to a file, as in production."""
    environment = dict(os.environ)
    if source is not None:
        environment["PYTHONPATH"] = source
    log = (work / f"gateway-{port}.log").open("wb")
    command = [*prefix, *pb.INTERLOCK, "serve", "--config", str(config), "--port", str(port)]
    return subprocess.Popen(command, cwd=work, env=environment, stdout=log, stderr=log)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--gap", type=float, default=2.0, help="ms between paced requests")
    parser.add_argument("--wrk", type=float, default=0, help="seconds of wrk (0: skip)")
    parser.add_argument("--baseline", help="another checkout's gateway, measured alongside")
    parser.add_argument("--callgrind", type=int, help="instructions per request over N requests")
    parser.add_argument("--strace", type=int, help="system calls per request over N requests")
    parser.add_argument(
        "--floor", action="store_true", help="also bench/floor_app.py (the serving layer alone)"
    )
    parser.add_argument("--paced-only", action="store_true", help="skip the one-at-a-time pairs")
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="interlock-small-bench-"))
    ports, processes, config = pb.emulated_upstreams(work)
    sources = [("now", None)] + ([("base", arguments.baseline)] if arguments.baseline else [])
    variants: list[hb.Variant] = []
    try:
        for name, source in sources:
            port = pb.free_port()
            prefix = callgrind.prefix(work, name) if arguments.callgrind else ()
            process = start(config, port, work, source, prefix)
            processes.append(process)
            pb.wait_healthy(port, "/healthz", process, timeout=600 if prefix else 60)
            variants.append(hb.Variant(name, port, process.pid))
        if arguments.floor and not arguments.callgrind:
            port = pb.free_port()
            command = [sys.executable, str(FLOOR_APP), str(port)]
            process = subprocess.Popen(command, cwd=work, stdout=subprocess.DEVNULL)
            processes.append(process)
            pb.wait_healthy(port, "/healthz", process)
            variants.append(hb.Variant("floor", port, process.pid))
        print(f"load average at start {pb.load_average()}", flush=True)
        if arguments.callgrind:
            for model in ("same", "cross"):
                line = f"small {model}: user-space instructions per request (callgrind)"
                for variant in variants:
                    count = instructions(variant, model, arguments.callgrind, work)
                    line += f" | {variant.name}: {count:,.0f} k"
                print(line, flush=True)
            return 0
        if arguments.strace:
            for cross in (False, True):
                line = f"small {'cross' if cross else 'same'}: system calls per request (strace -c)"
                for variant in variants:
                    if variant.name != "floor":
                        calls = system_calls(variant, cross, ports, arguments.strace, work)
                        line += f" | {variant.name}: {calls}"
                print(line, flush=True)
            return 0
        arguments.vary = "first"
        arguments.upstream = "responses"  # history_bench's cross upstream (its default)
        gateways = [variant for variant in variants if variant.name != "floor"]
        for cross in (False, True) if not arguments.paced_only else ():
            label = "small " + ("cross" if cross else "same")
            hb.case(label, SMALL, cross, ports, gateways, arguments)
        paced(variants, ports, arguments)
        if arguments.wrk:
            hb.wrk_cpu(variants, arguments.wrk)
    finally:
        for process in processes:
            pb.stop(process)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
