"""Proxy overhead: the gateway vs calling the same emulator directly, in the same run.

Starts two emulators (`interlock emulate`, Chat and Responses) and `interlock serve` as
subprocesses on loopback, then measures:

* added latency, non-streaming, same dialect (Chat → Chat) and cross-dialect
  (Chat client → Responses upstream): p50 / p99 of proxy minus direct;
* streaming: added time to first byte and added time per chunk;
* throughput with concurrent clients (optionally several gateway workers), error count;
* RSS of each gateway process after the run, and cold start to a healthy /healthz.

Usage: python bench/proxy_bench.py [--requests 400] [--workers 2] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
CHAT_BODY = {"model": "M", "messages": [{"role": "user", "content": "hello there, how are you?"}]}
RESPONSES_BODY = {"model": "M", "input": "hello there, how are you?", "store": False}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 20) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        try:
            if (
                httpx.post(url, json={}, timeout=1).status_code < 500
                or httpx.get(url, timeout=1).status_code == 200
            ):
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise RuntimeError(f"process exited: {process.args}")
        time.sleep(0.01)
    raise RuntimeError(f"{url} never became healthy")


def start(command: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def config_text(chat_port: int, responses_port: int) -> str:
    return f"""
[server]
access_log = false
[store]
url = "memory://"
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "http://127.0.0.1:{chat_port}/v1"
reasoning_dialect = "reasoning_content"
[[upstreams]]
name = "responses"
protocol = "openai-responses"
base_url = "http://127.0.0.1:{responses_port}/v1"
[[models]]
name = "same"
upstream = "chat"
model = "M"
[[models]]
name = "cross"
upstream = "responses"
model = "M"
"""


def latencies(client: httpx.Client, url: str, body: dict[str, object], count: int) -> list[float]:
    for _ in range(30):
        client.post(url, json=body).raise_for_status()
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        client.post(url, json=body).raise_for_status()
        samples.append(time.perf_counter() - started)
    return samples


def stream_timing(
    client: httpx.Client, url: str, body: dict[str, object], count: int
) -> tuple[float, float, int]:
    """Median time to first byte, median total, chunk count (data lines) of one stream."""
    ttfb: list[float] = []
    total: list[float] = []
    chunks = 0
    for index in range(count + 10):
        started = time.perf_counter()
        first = None
        lines = 0
        with client.stream("POST", url, json={**body, "stream": True}) as response:
            for line in response.iter_lines():
                if first is None:
                    first = time.perf_counter() - started
                lines += line.startswith("data:")
        if index >= 10:
            ttfb.append(first or 0.0)
            total.append(time.perf_counter() - started)
            chunks = lines
    return statistics.median(ttfb), statistics.median(total), chunks


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def throughput(
    url: str, body: dict[str, object], seconds: float, concurrency: int
) -> tuple[float, int]:
    done = 0
    errors = 0
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    transport = httpx.AsyncHTTPTransport(limits=limits, socket_options=NODELAY)
    async with httpx.AsyncClient(transport=transport, timeout=30) as client:

        async def worker() -> None:
            nonlocal done, errors
            while time.perf_counter() < deadline:
                try:
                    response = await client.post(url, json=body)
                    if response.status_code == 200:
                        done += 1
                    else:
                        errors += 1
                except httpx.HTTPError:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return done / elapsed, errors


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    arguments = parser.parse_args()
    interlock = [sys.executable, "-m", "interlock.gateway.cli"]
    work = Path(tempfile.mkdtemp(prefix="proxy-bench-"))
    chat_port, responses_port, gateway_port = free_port(), free_port(), free_port()
    processes = [
        start([*interlock, "emulate", "--protocol", "openai-chat", "--port", str(chat_port)], work),
        start(
            [
                *interlock,
                "emulate",
                "--protocol",
                "openai-responses",
                "--port",
                str(responses_port),
            ],
            work,
        ),
    ]
    config = work / "bench.toml"
    config.write_text(config_text(chat_port, responses_port))
    chat_direct = f"http://127.0.0.1:{chat_port}/v1/chat/completions"
    responses_direct = f"http://127.0.0.1:{responses_port}/v1/responses"
    proxy = f"http://127.0.0.1:{gateway_port}/v1/chat/completions"
    try:
        wait_healthy(chat_direct, processes[0])
        wait_healthy(responses_direct, processes[1])
        gateway = start(
            [*interlock, "serve", "--config", str(config), "--port", str(gateway_port)], work
        )
        processes.append(gateway)
        cold_start = wait_healthy(f"http://127.0.0.1:{gateway_port}/healthz", gateway)
        report(arguments, chat_direct, responses_direct, proxy, cold_start, gateway)
        gateway.terminate()
        gateway.wait()
        if arguments.workers > 1:
            multi = start(
                [
                    *interlock,
                    "serve",
                    "--config",
                    str(config),
                    "--port",
                    str(gateway_port),
                    "--workers",
                    str(arguments.workers),
                ],
                work,
            )
            processes.append(multi)
            wait_healthy(f"http://127.0.0.1:{gateway_port}/healthz", multi)
            time.sleep(1.0)
            rate, errors = asyncio.run(
                throughput(
                    proxy, {**CHAT_BODY, "model": "same"}, arguments.seconds, arguments.concurrency
                )
            )
            worker_rss = [rss_mb(pid) for pid in children(multi.pid)]
            print(
                f"throughput, {arguments.workers} workers, same dialect: {rate:,.0f} req/s, {errors} errors"
            )
            print(
                "RSS per worker after the run: "
                + ", ".join(f"{value:.0f} MB" for value in worker_rss)
            )
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait()
    return 0


def report(
    arguments: argparse.Namespace,
    chat_direct: str,
    responses_direct: str,
    proxy: str,
    cold_start: float,
    gateway: subprocess.Popen[bytes],
) -> None:
    count = arguments.requests
    with httpx.Client(transport=httpx.HTTPTransport(socket_options=NODELAY), timeout=30) as client:
        direct = latencies(client, chat_direct, CHAT_BODY, count)
        same = latencies(client, proxy, {**CHAT_BODY, "model": "same"}, count)
        direct_responses = latencies(client, responses_direct, RESPONSES_BODY, count)
        cross = latencies(client, proxy, {**CHAT_BODY, "model": "cross"}, count)
        stream_direct = stream_timing(client, chat_direct, CHAT_BODY, 100)
        stream_same = stream_timing(client, proxy, {**CHAT_BODY, "model": "same"}, 100)
        stream_cross_direct = stream_timing(client, responses_direct, RESPONSES_BODY, 100)
        stream_cross = stream_timing(client, proxy, {**CHAT_BODY, "model": "cross"}, 100)
    ms = 1000
    print(f"cold start to healthy: {cold_start * ms:.0f} ms")
    print(
        f"same dialect  direct p50 {pct(direct, 0.5) * ms:.2f} ms  proxy p50 {pct(same, 0.5) * ms:.2f} ms  "
        f"added p50 {(pct(same, 0.5) - pct(direct, 0.5)) * ms:.2f} ms  added p99 {(pct(same, 0.99) - pct(direct, 0.99)) * ms:.2f} ms  "
        f"ratio {pct(same, 0.5) / pct(direct, 0.5):.2f}x"
    )
    print(
        f"cross dialect direct p50 {pct(direct_responses, 0.5) * ms:.2f} ms  proxy p50 {pct(cross, 0.5) * ms:.2f} ms  "
        f"added p50 {(pct(cross, 0.5) - pct(direct_responses, 0.5)) * ms:.2f} ms  "
        f"ratio {pct(cross, 0.5) / pct(direct_responses, 0.5):.2f}x"
    )
    for label, (base_ttfb, base_total, _), (ttfb, total, chunks) in (
        ("stream same ", stream_direct, stream_same),
        ("stream cross", stream_cross_direct, stream_cross),
    ):
        per_chunk = max(0.0, (total - base_total) - (ttfb - base_ttfb)) / max(chunks, 1)
        print(
            f"{label}  added TTFB {(ttfb - base_ttfb) * ms:.2f} ms  added total {(total - base_total) * ms:.2f} ms  "
            f"chunks {chunks}  added per chunk {per_chunk * ms:.3f} ms"
        )
    print(f"RSS of the single-worker gateway after the latency runs: {rss_mb(gateway.pid):.0f} MB")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
