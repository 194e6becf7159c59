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
* **paced httpx**: an ``httpx.Client`` (the auditors' driver) sends one request every
  ``--gap`` ms (the server falls asleep between them), CPU per request as above.
* ``wrk -t1 -c16`` (``--wrk SECONDS``): saturating, many requests per wake-up (what a busy
  gateway sees), CPU per request.

``--baseline DIR`` measures another checkout's gateway in the same rounds, interleaved.

``--callgrind N`` measures instead what does not move with the machine's load: every gateway
runs under ``valgrind --tool=callgrind`` (instrumentation off until warmed up) and the figure
is user-space instructions per request over ``N`` one-at-a-time requests, same and cross
(kernel work such as socket reads and writes is not counted). Compare checkouts, not
absolutes.

Usage: python bench/small_bench.py [--rounds 5] [--requests 200] [--gap 2] [--wrk 5]
       [--baseline DIR] [--callgrind N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import history_bench as hb
import history_callgrind as callgrind
import httpx
import proxy_bench as pb

from interlock.transcript import JsonObject

SMALL: list[JsonObject] = [{"role": "user", "content": f"hello there {hb.MARK}"}]


def paced_cpu(variant: hb.Variant, model: str, requests: int, gap: float) -> float:
    """CPU ms per request of ``variant``: an httpx client, one request every ``gap`` s."""
    url = f"http://127.0.0.1:{variant.port}{pb.CHAT_PATH}"
    with httpx.Client(timeout=60) as client:
        for index in range(10):
            client.post(url, content=hb.chat_body(SMALL, model).replace(b"#VARY#", b"w%d" % index))
        started = hb.cpu_ns(variant.pid)
        for index in range(requests):
            body = hb.chat_body(SMALL, model).replace(b"#VARY#", b"%07d" % index)
            answer = client.post(url, content=body, headers={"content-type": "application/json"})
            if answer.status_code != 200:
                raise RuntimeError(f"HTTP {answer.status_code}: {answer.text}")
            time.sleep(gap)
        return (hb.cpu_ns(variant.pid) - started) / requests / 1e6


def paced(variants: list[hb.Variant], arguments: argparse.Namespace) -> None:
    for model in ("same", "cross"):
        results: dict[str, list[float]] = {variant.name: [] for variant in variants}
        for round_index in range(arguments.rounds):
            order = variants if round_index % 2 == 0 else variants[::-1]
            for variant in order:
                cpu = paced_cpu(variant, model, arguments.requests, arguments.gap / 1000)
                results[variant.name].append(cpu)
        line = f"small {model}, httpx paced {arguments.gap:g} ms"
        for variant in variants:
            line += f" | {variant.name}: CPU {statistics.median(results[variant.name]):.3f} ms/req"
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
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="interlock-small-bench-"))
    ports = {"chat": pb.free_port(), "responses": pb.free_port()}
    processes = [
        pb.emulator("openai-chat", ports["chat"], work, 2),
        pb.emulator("openai-responses", ports["responses"], work, 2),
    ]
    config = work / "interlock.toml"
    config.write_text(pb.config_text(ports["chat"], ports["responses"]))
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
        print(f"load average at start {pb.load_average()}", flush=True)
        if arguments.callgrind:
            for model in ("same", "cross"):
                line = f"small {model}: user-space instructions per request (callgrind)"
                for variant in variants:
                    count = instructions(variant, model, arguments.callgrind, work)
                    line += f" | {variant.name}: {count:,.0f} k"
                print(line, flush=True)
            return 0
        arguments.vary = "first"
        for cross in (False, True):
            label = "small " + ("cross" if cross else "same")
            hb.case(label, SMALL, cross, ports, variants, arguments)
        paced(variants, arguments)
        if arguments.wrk:
            hb.wrk_cpu(variants, arguments.wrk)
    finally:
        for process in processes:
            pb.stop(process)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
