"""AG-UI agents on routed models, from the client's side, over SSE and WebSocket.

Two emulator servers (A and B, each all four dialects, on loopback ports) fail on command
(:class:`~interlock.emulators.faults.FaultyApp`) and count every request by model. Each
test builds its own gateway (fresh deployment health), serves its agents on a real port
and runs them: the loop's model calls go through the gateway's router, so a deployment
answering 503 or 429 is retried elsewhere or falls back to another model, and a fallback
that would lose the thread's signatures is skipped, the run ending with ``RUN_ERROR``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette

from interlock.emulators import emulator_app
from interlock.emulators.faults import Fault, FaultyApp
from interlock.gateway.agui import binding_routes
from interlock.gateway.app import build_gateway
from interlock.gateway.config import parse_config
from tests.gateway.agui.harness import (
    TOOLS,
    Server,
    binding_for,
    new_id,
    of_type,
    open_socket,
    run_input,
    sse_events,
    sse_run,
    user,
)
from tests.gateway.serving import app_on_loopback, four_emulators

ASK = 'call get_weather with {"city": "Paris"}'


def _config(state_dir: Path, a: str, b: str) -> str:
    upstreams = "".join(
        f'[[upstreams]]\nname = "{name}"\nprotocol = "{protocol}"\nbase_url = "{url}"\n{extra}\n'
        for name, protocol, url, extra in [
            ("a-chat", "openai-chat", f"{a}/v1", 'reasoning_dialect = "reasoning_content"'),
            ("b-chat", "openai-chat", f"{b}/v1", 'reasoning_dialect = "reasoning_content"'),
            ("a-responses", "openai-responses", f"{a}/v1", ""),
            ("a-gemini", "gemini", a, ""),
        ]
    )
    agents = "".join(
        f'[[agents]]\nname = "{name}"\nmodel = "{name}"\ntools = ["{TOOLS}:get_weather"]\n\n'
        for name in ("spread", "falling", "skip-only")
    )
    return f"""
[server]
state_dir = "{state_dir}"

[store]
url = "memory://"

[routing]
failures_to_cool = 1
cooldown_seconds = 600
backoff_seconds = 0.01
backoff_max_seconds = 0.05

{upstreams}
[[models]]
name = "spread"
retries = 1
deployments = [{{ upstream = "a-chat", model = "spread-a" }}, {{ upstream = "b-chat", model = "spread-b" }}]

[[models]]
name = "falling"
retries = 0
fallbacks = ["backup-responses"]
deployments = [{{ upstream = "a-chat", model = "falling-a" }}]

[[models]]
name = "skip-only"
retries = 0
fallbacks = ["backup-gemini"]
deployments = [{{ upstream = "a-chat", model = "skiponly-a" }}, {{ upstream = "b-chat", model = "skiponly-b" }}]

[[models]]
name = "backup-responses"
upstream = "a-responses"
model = "gpt-backup"

[[models]]
name = "backup-gemini"
upstream = "a-gemini"
model = "gemini-3-backup"

{agents}"""


@dataclass
class Emulators:
    a: FaultyApp
    b: FaultyApp
    a_url: str
    b_url: str

    def seen(self) -> Counter[str]:
        return self.a.seen + self.b.seen


@pytest.fixture(scope="module")
def emulators() -> Iterator[Emulators]:
    a = FaultyApp(emulator_app(*four_emulators().values()))
    b = FaultyApp(emulator_app(*four_emulators().values()))
    # a dropped connection is an error in the emulator's server: keep it out of the output
    with app_on_loopback(a, "critical") as a_url, app_on_loopback(b, "critical") as b_url:
        yield Emulators(a, b, a_url, b_url)


@pytest.fixture
def server(emulators: Emulators, tmp_path: Path) -> Iterator[Server]:
    emulators.a.reset()
    emulators.b.reset()
    gateway = build_gateway(parse_config(_config(tmp_path, emulators.a_url, emulators.b_url), {}))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await gateway.close()  # its pooled upstream connections, on the server's loop

    app = Starlette(routes=binding_routes(binding_for(gateway)), lifespan=lifespan)
    served = Server(app, options={"lifespan": "on"}).start()
    try:
        yield served
    finally:
        served.stop()
    assert not emulators.a.pending and not emulators.b.pending, "every queued fault was used"


def _run(server: Server, agent: str, body: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    """One run's events, over SSE or over a WebSocket."""
    if transport == "sse":
        response, text = sse_run(server, body, agent)
        assert response.status_code == 200
        return sse_events(text)

    async def over_socket() -> list[dict[str, Any]]:
        async with open_socket(server, agent) as socket:
            return await socket.run(body)

    return asyncio.run(over_socket())


def _answer(events: list[dict[str, Any]]) -> str:
    assert of_type(events, "RUN_FINISHED"), events[-3:]
    assert of_type(events, "TOOL_CALL_START")[0]["toolCallName"] == "get_weather"
    return "".join(event["delta"] for event in of_type(events, "TEXT_MESSAGE_CONTENT"))


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_503_on_the_first_deployment_is_answered_by_the_second(
    server: Server, emulators: Emulators, transport: str
) -> None:
    emulators.a.fail(Fault(status=503, model="spread-a"))
    events = _run(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
    assert _answer(events).endswith(" returned sunny in Paris")
    # the failed deployment cooled down (failures_to_cool = 1): both calls went to B
    assert emulators.seen() == {"spread-a": 1, "spread-b": 2}


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_429_falls_back_to_another_model_in_another_dialect(
    server: Server, emulators: Emulators, transport: str
) -> None:
    emulators.a.fail(Fault(status=429, retry_after="0", model="falling-a"))
    events = _run(server, "falling", run_input(new_id("thread"), [user(ASK)]), transport)
    assert _answer(events).endswith(" returned sunny in Paris")
    assert emulators.seen() == {"falling-a": 1, "gpt-backup": 2}


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_fallback_that_would_lose_signatures_is_skipped_and_the_run_says_so(
    server: Server, emulators: Emulators, transport: str
) -> None:
    # round-robin sends the run's first call to A (a tool call), its second to B: failing
    emulators.b.fail(Fault(status=503, model="skiponly-b"))
    events = _run(server, "skip-only", run_input(new_id("thread"), [user(ASK)]), transport)
    (error,) = of_type(events, "RUN_ERROR")
    # Gemini 3 needs the tool call's thought signature, which the Chat model never made
    assert error["code"] == "UPSTREAM_ERROR"
    assert error["message"].startswith("upstream b-chat answered HTTP 503")
    assert error["message"].endswith(
        "(routing: fallback backup-gemini skipped: missing_signature at messages[1].parts[1])"
    )
    assert of_type(events, "TOOL_CALL_RESULT") and not of_type(events, "RUN_FINISHED")
    assert emulators.seen() == {"skiponly-a": 1, "skiponly-b": 1}  # Gemini never called


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_no_switch_after_the_first_streamed_event_reached_the_loop(
    server: Server, emulators: Emulators, transport: str
) -> None:
    emulators.a.fail(Fault(drop_after=2, model="spread-a"))  # a 200 stream that breaks off
    events = _run(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
    (error,) = of_type(events, "RUN_ERROR")
    assert error["code"] == "UPSTREAM_ERROR"
    assert error["message"] == "upstream a-chat: the stream broke off"
    assert emulators.seen() == {"spread-a": 1}  # never sent again, not even to B


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_when_every_deployment_failed_or_cools_down_the_run_ends_with_a_clear_error(
    server: Server, emulators: Emulators, transport: str
) -> None:
    emulators.a.fail(Fault(status=503, model="spread-a"))
    emulators.b.fail(Fault(status=500, model="spread-b"))
    events = _run(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
    (error,) = of_type(events, "RUN_ERROR")
    assert error["code"] == "UPSTREAM_ERROR"
    assert error["message"].startswith("upstream b-chat answered HTTP 500")
    # both cooled down (failures_to_cool = 1): the next run is not even sent
    events = _run(server, "spread", run_input(new_id("thread"), [user(ASK)]), transport)
    (error,) = of_type(events, "RUN_ERROR")
    assert error["code"] == "UPSTREAM_UNAVAILABLE"
    assert error["message"].startswith("no deployment of spread (or of its fallbacks)")
    assert emulators.seen() == {"spread-a": 1, "spread-b": 1}
