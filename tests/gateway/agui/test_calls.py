"""A run's model calls as operators see them, from the client's side, over SSE and WebSocket.

Two emulator servers (A and B, on loopback ports) fail on command; the whole gateway app
(AG-UI, ``/metrics``, ``/admin/usage``) is served on a real port. A routed agent's calls
are counted under the deployment that answered them, not the model's first one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlock.emulators import emulator_app
from interlock.emulators.faults import Fault, FaultyApp
from interlock.gateway.agui._calls import RunCalls
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.config_ops import RateLimit
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.rate_limits import RateLimiter, RedisBuckets
from tests.gateway.agui.harness import (
    TOOLS,
    Server,
    new_id,
    of_type,
    open_socket,
    run_input,
    sse_events,
    sse_run,
    user,
)
from tests.gateway.serving import app_on_loopback, four_emulators, free_port

ASK = 'call get_weather with {"city": "Paris"}'
ADMIN = {"authorization": "Bearer admin-key"}


def _config(state_dir: Path, a: str, b: str, extra: str = "") -> str:
    return f"""
[server]
state_dir = "{state_dir}"
access_log = false

[store]
url = "memory://"

[admin]
key_env = "ADMIN_KEY"

[routing]
failures_to_cool = 1
cooldown_seconds = 600

[[upstreams]]
name = "a-chat"
protocol = "openai-chat"
base_url = "{a}/v1"
reasoning_dialect = "reasoning_content"

[[upstreams]]
name = "b-chat"
protocol = "openai-chat"
base_url = "{b}/v1"
reasoning_dialect = "reasoning_content"

[[models]]
name = "spread"
retries = 1
deployments = [{{ upstream = "a-chat", model = "spread-a" }}, {{ upstream = "b-chat", model = "spread-b" }}]

[[agents]]
name = "spread"
model = "spread"
tools = ["{TOOLS}:get_weather"]
{extra}"""


@dataclass
class Emulators:
    a: FaultyApp
    b: FaultyApp
    a_url: str
    b_url: str


@pytest.fixture(scope="module")
def emulators() -> Iterator[Emulators]:
    a = FaultyApp(emulator_app(*four_emulators().values()))
    b = FaultyApp(emulator_app(*four_emulators().values()))
    with app_on_loopback(a, "critical") as a_url, app_on_loopback(b, "critical") as b_url:
        yield Emulators(a, b, a_url, b_url)


def serve_gateway(config: str) -> Iterator[Server]:
    """The whole gateway app for ``config`` on a real port (stopped afterwards)."""
    gateway = build_gateway(parse_config(config, {"ADMIN_KEY": "admin-key"}))
    served = Server(create_app(gateway), options={"lifespan": "on"}).start()
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def server(emulators: Emulators, tmp_path: Path) -> Iterator[Server]:
    emulators.a.reset()
    emulators.b.reset()
    yield from serve_gateway(_config(tmp_path, emulators.a_url, emulators.b_url))
    assert not emulators.a.pending and not emulators.b.pending, "every queued fault was used"


def run_over(
    server: Server, agent: str, body: dict[str, Any], transport: str, key: str | None = None
) -> list[dict[str, Any]]:
    """One run's events, over SSE or over a WebSocket (with an API ``key`` if given)."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    if transport == "sse":
        if not headers:
            response, text = sse_run(server, body, agent)
        else:
            response = httpx.post(
                f"{server.url}/agui/{agent}", json=body, headers=headers, timeout=60
            )
            text = response.text
        assert response.status_code == 200
        return sse_events(text)

    async def over_socket() -> list[dict[str, Any]]:
        async with open_socket(server, agent, additional_headers=headers) as socket:
            return await socket.run(body)

    return asyncio.run(over_socket())


def metric(text: str, name: str, **labels: str) -> float | None:
    """One sample of ``/metrics`` (``None`` when absent)."""
    inner = ",".join(f'{key}="{value}"' for key, value in labels.items())
    found = re.search(rf"^{name}\{{{re.escape(inner)}\}} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else None


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_routed_runs_usage_is_counted_under_the_deployment_that_answered(
    server: Server, emulators: Emulators, transport: str
) -> None:
    emulators.a.fail(Fault(status=503, model="spread-a"))
    events = run_over(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
    assert of_type(events, "RUN_FINISHED"), events[-3:]
    # A failed (and cooled down): both model calls were answered by B
    assert emulators.a.seen + emulators.b.seen == {"spread-a": 1, "spread-b": 2}
    usage = httpx.get(f"{server.url}/admin/usage", headers=ADMIN).json()["usage"]
    assert [(row["model"], row["deployment"], row["requests"]) for row in usage] == [
        ("spread", "b-chat", 2)
    ]
    metrics = httpx.get(f"{server.url}/metrics").text
    labels = {"tenant": "default", "model": "spread"}
    assert metric(metrics, "interlock_usage_requests_total", **labels, deployment="b-chat") == 2
    assert metric(metrics, "interlock_usage_requests_total", **labels, deployment="a-chat") is None


GOOGLE_FALLBACK = """
[[upstreams]]
name = "b-gemini"
protocol = "gemini"
base_url = "{b}"

[[models]]
name = "to-google"
retries = 0
fallbacks = ["on-gemini"]
deployments = [{{ upstream = "a-chat", model = "togoogle-a" }}]

[[models]]
name = "on-gemini"
upstream = "b-gemini"
model = "gemini-3-backup"

[[agents]]
name = "to-google"
model = "to-google"
"""


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_fallback_to_another_provider_is_named_in_the_runs_usage(
    emulators: Emulators, tmp_path: Path, transport: str
) -> None:
    emulators.a.reset()
    emulators.b.reset()
    extra = GOOGLE_FALLBACK.format(b=emulators.b_url)
    for server in serve_gateway(_config(tmp_path, emulators.a_url, emulators.b_url, extra)):
        emulators.a.fail(Fault(status=429, retry_after="0", model="togoogle-a"))
        body = run_input(new_id("thread"), [user("hello")])
        (finished,) = of_type(run_over(server, "to-google", body, transport), "RUN_FINISHED")
        assert emulators.a.seen + emulators.b.seen == {"togoogle-a": 1, "gemini-3-backup": 1}
        # the first deployment is OpenAI's (Chat); Google's model answered: usage says so
        assert [(entry["provider"], entry["model"]) for entry in finished["usage"]] == [
            ("google", "gemini-3-backup")
        ]
        usage = httpx.get(f"{server.url}/admin/usage", headers=ADMIN).json()["usage"]
        assert [(row["model"], row["deployment"]) for row in usage] == [("to-google", "b-gemini")]


def _limited(state_dir: Path, emulators: Emulators, limit: str) -> Iterator[Server]:
    emulators.a.reset()
    emulators.b.reset()
    extra = f'\n[[rate_limits]]\nmodel = "spread"\n{limit}\n'
    yield from serve_gateway(_config(state_dir, emulators.a_url, emulators.b_url, extra))


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_model_call_over_the_request_limit_ends_the_run_with_rate_limited(
    emulators: Emulators, tmp_path: Path, transport: str
) -> None:
    for server in _limited(tmp_path, emulators, "requests_per_minute = 1"):
        thread = new_id("thread")
        events = run_over(server, "spread", run_input(thread, [user(ASK)]), transport)
        # the first call (a tool call) was admitted and the tool ran; the second was refused
        assert of_type(events, "TOOL_CALL_RESULT") and not of_type(events, "RUN_FINISHED")
        (error,) = of_type(events, "RUN_ERROR")
        assert error["code"] == "RATE_LIMITED"
        assert error["message"].startswith(
            "rate limit exceeded for tenant 'default': 1 requests per minute"
        )
        waits = error["metadata"]["interlock"]
        assert 1 <= waits["retryAfterSeconds"] <= 60
        assert 0 < waits["retryAfterMs"] <= 60_000
        assert emulators.a.seen + emulators.b.seen == {"spread-a": 1}  # never sent
        # the next run on the thread is refused before its first call
        again = run_over(server, "spread", run_input(thread, [user(ASK)]), transport)
        assert of_type(again, "RUN_ERROR")[0]["code"] == "RATE_LIMITED"
        assert emulators.a.seen + emulators.b.seen == {"spread-a": 1}
        metrics = httpx.get(f"{server.url}/metrics").text
        refused = {"tenant": "default", "model": "spread", "limit": "requests"}
        assert metric(metrics, "interlock_rate_limited_total", **refused) == 2
        labels = {"tenant": "default", "model": "spread", "deployment": "a-chat"}
        assert metric(metrics, "interlock_usage_requests_total", **labels) == 1
        runs = {"agent": "spread", "code": "RATE_LIMITED"}
        assert metric(metrics, "interlock_agui_errors_total", **runs) == 2


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_tenants_limit_refuses_that_tenants_calls_only(
    emulators: Emulators, tmp_path: Path, transport: str
) -> None:
    emulators.a.reset()
    emulators.b.reset()
    keys = '[server]\napi_keys = [{key = "key-a", tenant = "team-a"}, {key = "key-b", tenant = "team-b"}]\n'
    config = _config(tmp_path, emulators.a_url, emulators.b_url, LIMIT_TEAM_A)
    for server in serve_gateway(config.replace("[server]\n", keys, 1)):
        limited = run_over(
            server, "spread", run_input(new_id("t"), [user(ASK)]), transport, "key-a"
        )
        (error,) = of_type(limited, "RUN_ERROR")
        assert error["code"] == "RATE_LIMITED"
        assert error["message"].startswith("rate limit exceeded for tenant 'team-a'")
        free = run_over(server, "spread", run_input(new_id("t"), [user(ASK)]), transport, "key-b")
        assert of_type(free, "RUN_FINISHED"), free[-1:]
        metrics = httpx.get(f"{server.url}/metrics", headers={"authorization": "Bearer key-b"})
        refused = {"tenant": "team-a", "model": "spread", "limit": "requests"}
        assert metric(metrics.text, "interlock_rate_limited_total", **refused) == 1
        assert 'tenant="team-b",model="spread",limit' not in metrics.text


LIMIT_TEAM_A = '\n[[rate_limits]]\ntenant = "team-a"\nrequests_per_minute = 1\n'


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_calls_tokens_are_charged_and_the_next_call_waits_for_the_token_limit(
    emulators: Emulators, tmp_path: Path, transport: str
) -> None:
    for server in _limited(tmp_path, emulators, "tokens_per_minute = 10"):
        events = run_over(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
        (error,) = of_type(events, "RUN_ERROR")
        assert error["code"] == "RATE_LIMITED"
        assert "10 tokens per minute" in error["message"]
        # the first call's tokens (more than 10) overdrew the budget: the wait is over 0
        assert error["metadata"]["interlock"]["retryAfterSeconds"] >= 1
        assert emulators.a.seen + emulators.b.seen == {"spread-a": 1}


def test_without_limits_a_run_error_has_no_retry_metadata(
    server: Server, emulators: Emulators
) -> None:
    emulators.a.fail(Fault(status=500, model="spread-a"))
    emulators.b.fail(Fault(status=500, model="spread-b"))
    events = run_over(server, "spread", run_input(new_id("thread"), [user(ASK)]), "sse")
    (error,) = of_type(events, "RUN_ERROR")
    assert error["code"] == "UPSTREAM_ERROR"
    assert "metadata" not in error


async def test_an_unreachable_shared_limiter_refuses_the_call_rather_than_run_it_unmetered() -> (
    None
):
    limits = [RateLimit(requests_per_minute=100)]
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    operations = ProxyOperations(limiter=RateLimiter(limits, RedisBuckets(closed)))
    calls = RunCalls(None, "default", "spread", "a-chat", operations)
    try:
        refused = await calls.admit()
    finally:
        await operations.close()
    assert refused is not None
    assert (refused.code, refused.status) == ("RATE_LIMITER_UNAVAILABLE", 503)
    assert calls.error_labels("RATE_LIMITER_UNAVAILABLE") == {
        "retryAfterSeconds": 1,
        "retryAfterMs": 1000,
    }
    assert calls.error_labels("UPSTREAM_ERROR") is None
