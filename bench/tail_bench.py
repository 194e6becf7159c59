"""Latency tails at real history sizes: whose pauses make the p99?

Same processes as ``bench/history_bench.py`` (two emulators with two workers each,
``interlock serve`` on loopback, one worker), continued histories (``--vary continue``), one
request at a time, every proxied request paired with a direct one to the emulator. Besides
the paired wall times (added p50 / p99), each proxied request's **gateway CPU** is read
from the kernel right before and right after it (``/proc/<pid>/task/*/schedstat``): a
pause of the gateway's own (a garbage collection, a long synchronous step) shows in the
CPU tail; a pause of the emulator or of a loaded machine's scheduler shows in the wall
tail only. The p99 of wall time at a load of 10–30 is mostly the scheduler's; the CPU
tail is the gateway's.

``--baseline DIR`` measures another checkout's gateway in the same rounds, interleaved.
The emulators come from this checkout (``PYTHONPATH``), so the stub is the same for both.

Usage: python bench/tail_bench.py [--sizes 1000,2000] [--rounds 3] [--requests 200]
       [--baseline DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

import history_bench as hb
import proxy_bench as pb


@dataclass
class Tail:
    """One round of one gateway: paired added wall times and per-request gateway CPU."""

    added: list[float]
    cpu: list[float]


def tail_round(
    variant: hb.Variant, cross: bool, size: int, ports: dict[str, int], count: int
) -> Tail:
    """``count`` continued requests after 10 warm-ups, each paired with a direct one."""
    model = "cross" if cross else "same"
    port, path = (ports["responses"], pb.RESPONSES_PATH) if cross else (ports["chat"], pb.CHAT_PATH)
    bodies = hb.bodies_for(hb.history(size), cross, model, "continue")
    direct = pb.Connection(port)
    connection = pb.Connection(variant.port)
    tail = Tail([], [])
    try:
        for index in range(10 + count):
            direct_body, proxy_body = bodies(index)
            before = hb.cpu_ns(variant.pid)
            proxied = connection.post(pb.CHAT_PATH, proxy_body).total
            used = hb.cpu_ns(variant.pid) - before
            alone = direct.post(path, direct_body).total
            if index >= 10:
                tail.added.append(proxied - alone)
                tail.cpu.append(used / 1e6)
    finally:
        connection.close()
        direct.close()
    return tail


def report(label: str, variants: list[hb.Variant], results: dict[str, list[Tail]]) -> None:
    line = label
    for variant in variants:
        rounds = results[variant.name]
        added = [value * pb.MS for tail in rounds for value in tail.added]
        cpu = [value for tail in rounds for value in tail.cpu]
        line += (
            f" | {variant.name}: added p50 {statistics.median(added):.2f} p99"
            f" {pb.pct(added, 0.99):.1f} ms; CPU p50 {statistics.median(cpu):.2f}"
            f" p99 {pb.pct(cpu, 0.99):.2f} max {max(cpu):.2f} ms"
        )
    print(f"{line}   [load {pb.load_average()}]", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,2000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--baseline", help="another checkout's gateway, measured alongside")
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="interlock-tail-bench-"))
    ports, processes, config = pb.emulated_upstreams(work)
    sources = [("now", None)] + ([("base", arguments.baseline)] if arguments.baseline else [])
    variants: list[hb.Variant] = []
    try:
        for name, source in sources:
            port = pb.free_port()
            command = ["serve", "--config", str(config), "--port", str(port)]
            process = hb.start_gateway(command, work, source)
            processes.append(process)
            pb.wait_healthy(port, "/healthz", process, timeout=60)
            variants.append(hb.Variant(name, port, process.pid))
        print(f"load average at start {pb.load_average()}", flush=True)
        for size in (int(size) for size in arguments.sizes.split(",")):
            for cross in (False, True):
                results: dict[str, list[Tail]] = {variant.name: [] for variant in variants}
                for round_index in range(arguments.rounds):
                    order = variants if round_index % 2 == 0 else variants[::-1]
                    for variant in order:
                        run = tail_round(variant, cross, size, ports, arguments.requests)
                        results[variant.name].append(run)
                label = f"history {'cross' if cross else 'same'} {size:>5} msgs"
                report(label, variants, results)
    finally:
        for process in processes:
            pb.stop(process)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
