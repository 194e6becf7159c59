"""What routing adds per request: a routed model against a single-upstream model, same run.

One in-process gateway (``build_gateway`` + ``create_app``, called as an ASGI app with no
HTTP client or socket in between) serves two models over the same upstream transport, a
stub answering every request with the same prebuilt Chat completion:

* ``single``: one upstream, no fallbacks — the plain path (the baseline);
* ``routed``: three weighted deployments (3/2/1) and two fallbacks — every request goes
  through the router (weighted pick, health check, per-deployment encode, bookkeeping).

The requests are Chat Completions → Chat upstream, non-streaming (the cheapest proxy path,
so routing's share is the largest it can be), then streamed (nine chunks; a routed stream is
also held until its first event is decoded). Baseline and routed requests alternate one by
one (their order swapped every pair) so both see the same machine load; each request's
cost is the thread's CPU time (``time.thread_time_ns``: time the process was preempted
does not count). The figure is the median of the paired differences (routed minus the
baseline request next to it), per round; the result is the median round.

Usage: python bench/routing_bench.py [--rounds 7] [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

import httpx

from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store

TARGET_MS = 0.05
ANSWER = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
).encode()
CONFIG = """
[server]
access_log = false

[store]
url = "memory://"

[[upstreams]]
name = "up-1"
protocol = "openai-chat"
base_url = "https://one.invalid/v1"

[[upstreams]]
name = "up-2"
protocol = "openai-chat"
base_url = "https://two.invalid/v1"

[[upstreams]]
name = "up-3"
protocol = "openai-chat"
base_url = "https://three.invalid/v1"

[[models]]
name = "single"
upstream = "up-1"
model = "m-single"

[[models]]
name = "routed"
fallbacks = ["spare-1", "spare-2"]
deployments = [
  { upstream = "up-1", model = "m-a", weight = 3 },
  { upstream = "up-2", model = "m-b", weight = 2 },
  { upstream = "up-3", model = "m-c", weight = 1 },
]

[[models]]
name = "spare-1"
upstream = "up-2"
model = "m-spare-1"

[[models]]
name = "spare-2"
upstream = "up-3"
model = "m-spare-2"
"""


CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}],
}
LAST = {**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
STREAM = (
    "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in [CHUNK] * 8 + [LAST]) + "data: [DONE]\n\n"
).encode()


class Stub(httpx.AsyncBaseTransport):
    """Every request answered at once with the same completion (or stream of 9 chunks)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if b'"stream":true' in request.content:
            headers = {"content-type": "text/event-stream"}
            return httpx.Response(200, headers=headers, content=STREAM)
        return httpx.Response(200, headers={"content-type": "application/json"}, content=ANSWER)


def _body(model: str, stream: bool) -> bytes:
    return json.dumps(
        {
            "model": model,
            "stream": stream,
            "messages": [{"role": "user", "content": "hello there, how are you?"}],
        },
        separators=(",", ":"),
    ).encode()


class Caller:
    """Calls the ASGI app directly with one POST /v1/chat/completions."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def post(self, body: bytes) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",
            "root_path": "",
            "query_string": b"",
            "headers": [
                (b"host", b"localhost"),
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
            "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 8787),
        }
        sent = False
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)  # the client stays: no disconnect
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.app(scope, receive, send)
        return status


async def _round(caller: Caller, requests: int, stream: bool) -> tuple[float, float, float]:
    """Median CPU µs of baseline and routed requests, and of their paired differences."""
    single, routed = _body("single", stream), _body("routed", stream)
    base_costs: list[int] = []
    routed_costs: list[int] = []
    for index in range(requests):
        order = (single, routed) if index % 2 == 0 else (routed, single)
        costs: dict[bytes, int] = {}
        for body in order:
            started = time.thread_time_ns()
            status = await caller.post(body)
            costs[body] = time.thread_time_ns() - started
            assert status == 200, status
        base_costs.append(costs[single])
        routed_costs.append(costs[routed])
    differences = [r - b for r, b in zip(routed_costs, base_costs, strict=True)]
    return (
        statistics.median(base_costs) / 1000,
        statistics.median(routed_costs) / 1000,
        statistics.median(differences) / 1000,
    )


async def main(rounds: int, requests: int) -> None:
    config = parse_config(CONFIG, {})
    transports = {name: Stub() for name in ("up-1", "up-2", "up-3")}
    gateway = build_gateway(config, transports=transports, store=open_store("memory://"))
    caller = Caller(create_app(gateway))
    for stream in (False, True):
        await _round(caller, 200, stream)  # warm up: imports, caches, templates
        results = [await _round(caller, requests, stream) for _ in range(rounds)]
        kind = "streamed (9 chunks)" if stream else "non-streaming"
        for number, (base, routed, added) in enumerate(results, 1):
            print(
                f"{kind} round {number}: baseline {base:.1f} µs, routed {routed:.1f} µs, "
                f"added {added:.1f} µs"
            )
        added = statistics.median(result[2] for result in results)
        base = statistics.median(result[0] for result in results)
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        verdict = "met" if added / 1000 <= TARGET_MS else "NOT met"
        print(
            f"{kind}: routing adds {added / 1000:.4f} ms CPU per request (median round; "
            f"baseline {base / 1000:.3f} ms); target ≤ {TARGET_MS} ms: {verdict}; "
            f"load average {load}"
        )
    await gateway.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=2000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.requests))
