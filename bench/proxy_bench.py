"""Proxy overhead: the gateway vs calling the same emulator directly, in the same run.

Starts emulators (`interlock emulate`, Chat and Responses) and `interlock serve` as
subprocesses on loopback, then measures:

* cold start of `interlock serve` to a healthy /healthz (median of several starts);
* added latency, non-streaming, same dialect (Chat → Chat) and cross-dialect (Chat client
  → Responses upstream). Direct and proxied requests alternate one by one, so both see the
  same machine load; added p50 / p99 are percentiles of the paired differences (proxied
  minus the direct request next to it). Several rounds; the figure is the median round;
* streaming: added time to the first body byte, and added time per SSE event;
* throughput with many keep-alive connections against several gateway workers, with an
  emulator that has workers of its own, compared with the emulator alone; error count;
* RSS of every gateway process after the run.

The clients are deliberately cheap: a blocking raw-socket HTTP/1.1 client for latency and
`wrk` (when installed: `apt-get install wrk`) or an asyncio raw-socket load generator for
throughput, so the figures measure the gateway rather than the client library.

Usage: python bench/proxy_bench.py [--rounds 5] [--requests 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CHAT_BODY = {"model": "M", "messages": [{"role": "user", "content": "hello there, how are you?"}]}
RESPONSES_BODY = {"model": "M", "input": "hello there, how are you?", "store": False}
CHAT_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"
INTERLOCK = [sys.executable, "-m", "interlock.gateway.cli"]
MS = 1000.0


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


GATEWAY_SOURCE: str | None = None
"""``--gateway-source``: another checkout whose gateway to measure (A/B against this one)."""


def start(arguments: list[str], cwd: Path, source: str | None = None) -> subprocess.Popen[bytes]:
    environment = dict(os.environ)
    if source is not None:
        environment["PYTHONPATH"] = source
    return subprocess.Popen(
        [*INTERLOCK, *arguments],
        cwd=cwd,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_healthy(
    port: int, path: str, process: subprocess.Popen[bytes], timeout: float = 30
) -> float:
    """Seconds from now until ``path`` answers (any status below 500)."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
                if int(sock.recv(64).split(b" ", 2)[1]) < 500:
                    return time.perf_counter() - started
        except (OSError, IndexError, ValueError):
            pass
        if process.poll() is not None:
            raise RuntimeError(f"process exited: {process.args}")
        time.sleep(0.005)
    raise RuntimeError(f"port {port} never became healthy")


def emulator(protocol: str, port: int, cwd: Path, workers: int = 1) -> subprocess.Popen[bytes]:
    arguments = ["emulate", "--protocol", protocol, "--port", str(port)]
    process = start([*arguments, "--workers", str(workers)], cwd)
    wait_healthy(port, "/", process, timeout=120)  # a loaded machine starts slowly
    return process


def emulated_upstreams(work: Path, extra: str = "") -> tuple[list[subprocess.Popen[bytes]], Path]:
    """A Chat and a Responses emulator (two workers each) and a gateway config for them (plus
    ``extra``) in ``work``: the processes to stop, and the config's path."""
    ports = {"chat": free_port(), "responses": free_port()}
    processes = [
        emulator("openai-chat", ports["chat"], work, 2),
        emulator("openai-responses", ports["responses"], work, 2),
    ]
    config = work / "interlock.toml"
    config.write_text(config_text(ports["chat"], ports["responses"]) + extra)
    return ports, processes, config


def gateway(config: Path, port: int, cwd: Path, workers: int = 1) -> subprocess.Popen[bytes]:
    arguments = ["serve", "--config", str(config), "--port", str(port)]
    return start([*arguments, "--workers", str(workers)], cwd, GATEWAY_SOURCE)


def config_text(chat_port: int, responses_port: int) -> str:
    # Access logs stay on (the default): they are part of a request's cost.
    return f"""
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


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def role(pid: int) -> str:
    command = Path(f"/proc/{pid}/cmdline").read_bytes()
    return "resource tracker" if b"resource_tracker" in command else "worker"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# ---------------------------------------------------------------- a raw HTTP/1.1 client


@dataclass(frozen=True)
class Timing:
    first_byte: float
    total: float
    events: int


class Connection:
    """One keep-alive connection; ``post`` times the first body byte and the whole answer."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def close(self) -> None:
        self.sock.close()

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.buffer += data

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self._fill()
        end = self.buffer.index(marker) + len(marker)
        found, self.buffer = self.buffer[:end], self.buffer[end:]
        return found

    def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        found, self.buffer = self.buffer[:size], self.buffer[size:]
        return found

    def post(self, path: str, body: bytes) -> Timing:
        head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        if path.endswith("/messages"):  # Anthropic's Messages API (gateway and emulator)
            head += "anthropic-version: 2023-06-01\r\n"
        request = head.encode() + b"content-length: %d\r\n\r\n" % len(body) + body
        started = time.perf_counter()
        self.sock.sendall(request)
        headers = self._until(b"\r\n\r\n").lower()
        status = int(headers.split(b" ", 2)[1])
        if not self.buffer:
            self._fill()
        first_byte = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"HTTP {status} from {path}")
        match = re.search(rb"content-length: *(\d+)", headers)
        if match:
            content = self._exactly(int(match.group(1)))
        else:
            pieces: list[bytes] = []
            while size := int(self._until(b"\r\n").strip(), 16):
                pieces.append(self._exactly(size + 2)[:-2])
            self._until(b"\r\n")
            content = b"".join(pieces)
        return Timing(first_byte, time.perf_counter() - started, content.count(b"data:"))


# ---------------------------------------------------------------- latency


def paired(
    direct: tuple[Connection, str, bytes], proxy: tuple[Connection, str, bytes], count: int
) -> tuple[list[Timing], list[Timing]]:
    """``count`` direct and proxied requests, alternating (order flipped every other pair)."""
    for _ in range(20):
        direct[0].post(direct[1], direct[2])
        proxy[0].post(proxy[1], proxy[2])
    direct_timings: list[Timing] = []
    proxy_timings: list[Timing] = []
    for index in range(count):
        if index % 2:
            proxy_timings.append(proxy[0].post(proxy[1], proxy[2]))
            direct_timings.append(direct[0].post(direct[1], direct[2]))
        else:
            direct_timings.append(direct[0].post(direct[1], direct[2]))
            proxy_timings.append(proxy[0].post(proxy[1], proxy[2]))
    return direct_timings, proxy_timings


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Round:
    direct_p50: float
    proxy_p50: float
    added_p50: float
    added_p99: float
    proxy_p99: float
    added_first_byte: float
    added_per_event: float
    events: int


def one_round(
    direct: tuple[Connection, str, bytes], proxy: tuple[Connection, str, bytes], count: int
) -> Round:
    direct_timings, proxy_timings = paired(direct, proxy, count)
    totals = [p.total - d.total for d, p in zip(direct_timings, proxy_timings, strict=True)]
    firsts = [
        p.first_byte - d.first_byte for d, p in zip(direct_timings, proxy_timings, strict=True)
    ]
    direct_totals = [t.total for t in direct_timings]
    proxy_totals = [t.total for t in proxy_timings]
    events = proxy_timings[0].events
    added_total = statistics.median(totals)
    added_first = statistics.median(firsts)
    return Round(
        direct_p50=statistics.median(direct_totals),
        proxy_p50=statistics.median(proxy_totals),
        added_p50=added_total,
        added_p99=pct(totals, 0.99),
        proxy_p99=pct(proxy_totals, 0.99),
        added_first_byte=added_first,
        added_per_event=max(0.0, added_total - added_first) / max(events, 1),
        events=events,
    )


def latency_report(label: str, rounds: list[Round], *, streaming: bool) -> dict[str, float]:
    def median(name: str) -> float:
        return statistics.median(getattr(r, name) for r in rounds)

    figures = {name: median(name) for name in Round.__dataclass_fields__}
    spread = ", ".join(
        f"{(r.added_first_byte if streaming else r.added_p50) * MS:.2f}" for r in rounds
    )
    if streaming:
        print(
            f"{label}  added first byte {figures['added_first_byte'] * MS:.2f} ms  "
            f"added total {figures['added_p50'] * MS:.2f} ms  events {figures['events']:.0f}  "
            f"added per event {figures['added_per_event'] * MS:.3f} ms   (rounds: {spread})"
        )
    else:
        print(
            f"{label}  direct p50 {figures['direct_p50'] * MS:.2f} ms  proxy p50 "
            f"{figures['proxy_p50'] * MS:.2f} ms  added p50 {figures['added_p50'] * MS:.2f} ms  "
            f"added p99 {figures['added_p99'] * MS:.2f} ms  proxy p99 "
            f"{figures['proxy_p99'] * MS:.2f} ms  ratio "
            f"{figures['proxy_p50'] / figures['direct_p50']:.2f}x   (rounds: {spread})"
        )
    return figures


def latencies(
    arguments: argparse.Namespace,
    ports: dict[str, int],
    proxy_port: int,
    *,
    cross: bool = True,
    prefix: str = "",
) -> dict[str, dict[str, float]]:
    """Paired latency rounds for each case; the median round's figures by case label."""
    chat = json.dumps(CHAT_BODY).encode()
    responses = json.dumps(RESPONSES_BODY).encode()
    same = json.dumps({**CHAT_BODY, "model": "same"}).encode()
    across = json.dumps({**CHAT_BODY, "model": "cross"}).encode()
    to_chat = ((ports["chat"], CHAT_PATH, chat), (CHAT_PATH, same))
    to_responses = ((ports["responses"], RESPONSES_PATH, responses), (CHAT_PATH, across))
    cases = [("same dialect ", *to_chat, False), ("stream same  ", *to_chat, True)]
    if cross:
        cases[1:1] = [("cross dialect", *to_responses, False)]
        cases.append(("stream cross ", *to_responses, True))
    results: dict[str, dict[str, float]] = {}
    for label, (port, path, body), (proxy_path, proxy_body), streaming in cases:
        if streaming:
            body = _streaming(body)
            proxy_body = _streaming(proxy_body)
        direct = Connection(port)
        proxy = Connection(proxy_port)
        rounds = [
            one_round((direct, path, body), (proxy, proxy_path, proxy_body), arguments.requests)
            for _ in range(arguments.rounds)
        ]
        direct.close()
        proxy.close()
        results[label.strip()] = latency_report(prefix + label, rounds, streaming=streaming)
    return results


def _streaming(body: bytes) -> bytes:
    return json.dumps({**json.loads(body), "stream": True}).encode()


# ---------------------------------------------------------------- throughput


async def _load_python(
    port: int, path: str, body: bytes, seconds: float, connections: int
) -> tuple[int, int]:
    head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    request = head.encode() + b"content-length: %d\r\n\r\n" % len(body) + body
    deadline = time.perf_counter() + seconds
    done = errors = 0

    async def worker() -> None:
        nonlocal done, errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.perf_counter() < deadline:
            writer.write(request)
            headers = (await reader.readuntil(b"\r\n\r\n")).lower()
            match = re.search(rb"content-length: *(\d+)", headers)
            await reader.readexactly(int(match.group(1)) if match else 0)
            if headers[9:12] == b"200":
                done += 1
            else:
                errors += 1
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return done, errors


def load(
    tool: str, port: int, path: str, body: bytes, seconds: float, connections: int
) -> tuple[float, int]:
    """Requests per second and errors (non-200 answers and socket errors)."""
    if tool == "python":
        started = time.perf_counter()
        done, errors = asyncio.run(_load_python(port, path, body, seconds, connections))
        return done / (time.perf_counter() - started), errors
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {json.dumps(body.decode())}\n"
        )
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:.0f}s", "-s", script.name]
    output = subprocess.run(
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout
    os.unlink(script.name)
    found = re.search(r"Requests/sec:\s+([\d.]+)", output)
    if found is None:
        raise RuntimeError(f"unexpected wrk output: {output}")
    rate = float(found.group(1))
    errors = sum(
        int(n)
        for n in re.findall(
            r"(?:Non-2xx or 3xx responses|connect|read|write|timeout):? (\d+)", output
        )
    )
    return rate, errors


def rates(
    arguments: argparse.Namespace, tool: str, cases: dict[str, tuple[int, bytes]]
) -> dict[str, float]:
    """Median req/s per case over the rounds (cases alternate within a round); printed."""
    measured: dict[str, list[float]] = {name: [] for name in cases}
    errors = dict.fromkeys(cases, 0)
    for _ in range(arguments.throughput_rounds):
        for name, (port, body) in cases.items():
            rate, failed = load(
                tool, port, CHAT_PATH, body, arguments.seconds, arguments.connections
            )
            measured[name].append(rate)
            errors[name] += failed
    medians = {name: statistics.median(values) for name, values in measured.items()}
    baseline = next(iter(medians.values()))
    for name, median in medians.items():
        runs = ", ".join(f"{rate:,.0f}" for rate in measured[name])
        print(
            f"  {name:<24} {median:7,.0f} req/s  ({runs})  errors {errors[name]}  "
            f"ratio {median / baseline:.2f}x"
        )
    return medians


def throughput(
    arguments: argparse.Namespace, ports: dict[str, int], config: Path, work: Path
) -> dict[str, float]:
    tool = load_tool(arguments)
    cases = {
        "emulator alone (Chat)": (ports["chat"], json.dumps(CHAT_BODY).encode()),
        "gateway, same dialect": (
            ports["gateway"],
            json.dumps({**CHAT_BODY, "model": "same"}).encode(),
        ),
        "gateway, cross dialect": (
            ports["gateway"],
            json.dumps({**CHAT_BODY, "model": "cross"}).encode(),
        ),
    }
    served = gateway(config, ports["gateway"], work, arguments.workers)
    try:
        wait_healthy(ports["gateway"], "/healthz", served)
        time.sleep(1.0)  # every worker up
        print(
            f"throughput ({tool}, {arguments.connections} connections, {arguments.seconds:.0f} s each, "
            f"{arguments.workers} gateway workers, {arguments.emulator_workers} emulator workers):"
        )
        medians = rates(arguments, tool, cases)
        sizes = [f"supervisor {rss_mb(served.pid):.0f} MB"]
        sizes += [f"{role(pid)} {rss_mb(pid):.0f} MB" for pid in children(served.pid)]
        print("RSS per gateway process after the run: " + ", ".join(sizes))
        return medians
    finally:
        stop(served)


def load_tool(arguments: argparse.Namespace) -> str:
    return arguments.load or ("wrk" if shutil.which("wrk") else "python")


# ---------------------------------------------------------------- litellm (optional)


def litellm(
    binary: str, port: int, chat_port: int, work: Path, workers: int
) -> subprocess.Popen[bytes]:
    """``litellm --config`` routing model ``same`` to the Chat emulator, on loopback."""
    config = work / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: same\n"
        "    litellm_params:\n"
        "      model: openai/M\n"
        f"      api_base: http://127.0.0.1:{chat_port}/v1\n"
        "      api_key: unused\n"
        "general_settings:\n"
        "  dangerously_permit_weak_or_unset_master_key: true\n"
    )
    command = [binary, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    environment = {**os.environ, "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true"}
    return subprocess.Popen(
        [*command, "--num_workers", str(workers)],
        cwd=work,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def compare_litellm(
    arguments: argparse.Namespace,
    ports: dict[str, int],
    work: Path,
    ours: dict[str, dict[str, float]],
    our_rate: float,
) -> None:
    """The same measurements through litellm's proxy; ratios against Interlock's."""
    port = free_port()
    print(f"litellm proxy ({arguments.litellm}):")
    served = litellm(arguments.litellm, port, ports["chat"], work, 1)
    try:
        started = wait_healthy(port, "/health/liveliness", served, timeout=120)
        print(f"  cold start to healthy: {started * MS:.0f} ms")
        theirs = latencies(arguments, ports, port, cross=False, prefix="  litellm ")
    finally:
        stop(served)
    for label in theirs:
        key = "added_first_byte" if label.startswith("stream") else "added_p50"
        ratio = theirs[label][key] / ours[label][key]
        print(f"  {label}: litellm adds {ratio:.1f}x what Interlock adds")
    served = litellm(arguments.litellm, port, ports["chat"], work, arguments.workers)
    try:
        wait_healthy(port, "/health/liveliness", served, timeout=120)
        time.sleep(1.0)
        body = json.dumps({**CHAT_BODY, "model": "same"}).encode()
        tool = load_tool(arguments)
        print(f"  throughput ({tool}, {arguments.workers} litellm workers):")
        medians = rates(arguments, tool, {"litellm, same dialect": (port, body)})
        print(
            f"  Interlock / litellm throughput: {our_rate / medians['litellm, same dialect']:.1f}x"
        )
    finally:
        stop(served)


# ---------------------------------------------------------------- main


def cold_starts(config: Path, port: int, work: Path, count: int) -> list[float]:
    times: list[float] = []
    for _ in range(count):
        process = gateway(config, port, work)
        try:
            times.append(wait_healthy(port, "/healthz", process))
        finally:
            stop(process)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="latency rounds (median reported)")
    parser.add_argument("--requests", type=int, default=200, help="request pairs per round")
    parser.add_argument("--workers", type=int, default=2, help="gateway workers for throughput")
    parser.add_argument("--emulator-workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--throughput-rounds", type=int, default=3)
    parser.add_argument("--cold-starts", type=int, default=3)
    parser.add_argument(
        "--load", choices=["wrk", "python"], help="load generator (default: wrk if installed)"
    )
    parser.add_argument(
        "--litellm",
        metavar="BIN",
        help="also measure litellm's proxy (its `litellm` command, installed in another environment)",
    )
    parser.add_argument(
        "--gateway-source",
        help="run the gateway from this source tree (PYTHONPATH), e.g. an older commit",
    )
    arguments = parser.parse_args()
    global GATEWAY_SOURCE
    GATEWAY_SOURCE = arguments.gateway_source
    work = Path(tempfile.mkdtemp(prefix="proxy-bench-"))
    ports = {name: free_port() for name in ("chat", "responses", "gateway")}
    config = work / "bench.toml"
    config.write_text(config_text(ports["chat"], ports["responses"]))
    print(f"load average before: {load_average()}  ({os.cpu_count()} cores)")
    emulators = [
        emulator("openai-chat", ports["chat"], work, arguments.emulator_workers),
        emulator("openai-responses", ports["responses"], work, arguments.emulator_workers),
    ]
    try:
        starts = cold_starts(config, ports["gateway"], work, arguments.cold_starts)
        print(
            f"cold start to healthy: median {statistics.median(starts) * MS:.0f} ms  "
            f"({', '.join(f'{s * MS:.0f}' for s in starts)})"
        )
        served = gateway(config, ports["gateway"], work)
        try:
            wait_healthy(ports["gateway"], "/healthz", served)
            ours = latencies(arguments, ports, ports["gateway"])
            print(
                f"RSS of the single-worker gateway after the latency runs: {rss_mb(served.pid):.0f} MB"
            )
        finally:
            stop(served)
        our_rates = throughput(arguments, ports, config, work) if arguments.workers > 0 else {}
        if arguments.litellm:
            compare_litellm(
                arguments, ports, work, ours, our_rates.get("gateway, same dialect", 0.0)
            )
        else:
            print("litellm comparison skipped (pass --litellm BIN to run it)")
    finally:
        for process in emulators:
            stop(process)
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
