"""The router in-process: health and cooldown on a fake clock, backoff, what is never resent.

The client-side matrix (official SDKs, emulators failing on command) is in
``test_serve_routing.py``; this file pins the rules that need a clock or a mock transport:
cooldowns ending, ``retry-after`` honoured (and capped), a 503 with ``retry-after`` when
every deployment cools down, a per-deployment key, timeouts never retried.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque

import httpx
import pytest
from starlette.types import Message

from interlock.gateway.app import Gateway, build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.config_routing import RoutingConfig
from interlock.gateway.routing import Router
from interlock.gateway.routing_targets import Health
from interlock.gateway.stores import open_store
from tests.gateway.helpers import UPSTREAM_KEY, Handler, chat_completion, client
from tests.gateway.loopback_upstream import Reply, until, upstream

CONFIG = """
[server]
access_log = false

[store]
url = "memory://"

[routing]
failures_to_cool = 2
failure_window_seconds = 10
cooldown_seconds = 30
backoff_seconds = 0.1
backoff_max_seconds = 1

[[upstreams]]
name = "one"
protocol = "openai-chat"
base_url = "https://one.example/v1"
api_key_env = "UP_KEY"

[[upstreams]]
name = "two"
protocol = "openai-chat"
base_url = "https://two.example/v1"
api_key_env = "UP_KEY"

[[models]]
name = "pair"
retries = 1
deployments = [
  { upstream = "one", model = "m-one" },
  { upstream = "two", model = "m-two", api_key_env = "OTHER_KEY" },
]

[[models]]
name = "solo"
retries = 3
fallbacks = ["pair"]
deployments = [{ upstream = "one", model = "m-solo" }]

[[upstreams]]
name = "gem"
protocol = "gemini"
base_url = "https://gem.example"
replay_mode = "degrade"

[[models]]
name = "gem-3"
upstream = "gem"
model = "gemini-3-flash"

[[models]]
name = "strict-route"
retries = 0
fallbacks = ["gem-3", "solo"]
deployments = [{ upstream = "one", model = "m-strict" }]

[[models]]
name = "strict-gemini"
replay_mode = "strict"
fallbacks = ["pair"]
deployments = [{ upstream = "gem", model = "gemini-3-flash" }]

[[models]]
name = "degrade-route"
retries = 0
replay_mode = "degrade"
fallbacks = ["gem-3"]
deployments = [{ upstream = "one", model = "m-degrade" }]
"""
ASK = {"model": "pair", "messages": [{"role": "user", "content": "hi"}]}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def gateway(handlers: dict[str, Handler], config: str = CONFIG) -> Gateway:
    return build_gateway(
        parse_config(config, {"UP_KEY": UPSTREAM_KEY, "OTHER_KEY": "sk-other"}),
        transports={name: httpx.MockTransport(handler) for name, handler in handlers.items()},
        store=open_store("memory://"),
    )


def _router(built: Gateway) -> tuple[Router, Clock]:
    router = built.proxy.router
    assert router is not None
    clock = Clock()
    router.clock, router.sleep = clock, clock.sleep
    return router, clock


def _answer(status: int, *, retry_after: str | None = None) -> httpx.Response:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    if status == 200:
        return httpx.Response(200, json=chat_completion())
    return httpx.Response(status, json={"error": {"message": "busy"}}, headers=headers)


def test_failures_within_the_window_cool_a_deployment_until_the_period_ends() -> None:
    policy = RoutingConfig(failures_to_cool=3, failure_window_seconds=10, cooldown_seconds=30)
    health = Health("one/m")
    assert not health.fail(0.0, policy)
    assert not health.fail(5.0, policy)
    assert not health.fail(12.0, policy)  # the first one left the window
    assert health.failures == deque([5.0, 12.0])
    assert health.fail(13.0, policy)
    assert not health.available(42.9) and health.available(43.0)


async def test_a_cooled_deployment_comes_back_when_its_cooldown_ends() -> None:
    seen: list[str] = []

    def one(request: httpx.Request) -> httpx.Response:
        seen.append("one")
        return _answer(500)

    def two(request: httpx.Request) -> httpx.Response:
        seen.append("two")
        return _answer(200)

    built = gateway({"one": one, "two": two}, CONFIG)
    _, clock = _router(built)
    async with client(built) as http:
        for _ in range(6):
            assert (await http.post("/v1/chat/completions", json=ASK)).status_code == 200
        assert seen.count("one") == 2  # two failures cool it: then only "two"
        clock.now += 30
        for _ in range(2):  # the round-robin comes back to "one" within two requests
            await http.post("/v1/chat/completions", json=ASK)
    assert seen.count("one") == 3
    assert clock.slept == []  # moving to another deployment does not wait


async def test_every_deployment_cooling_is_a_503_with_retry_after() -> None:
    built = gateway({"one": lambda _: _answer(503), "two": lambda _: _answer(502)}, CONFIG)
    _, clock = _router(built)
    async with client(built) as http:
        for _ in range(2):  # each request fails once on each deployment
            answer = await http.post("/v1/chat/completions", json=ASK)
            assert answer.status_code in (502, 503)
        clock.now += 12.5
        answer = await http.post("/v1/chat/completions", json=ASK)
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "18"
    assert answer.headers["x-interlock-translation"] == "none"
    assert answer.json()["error"]["code"] == "no_deployment_available"


async def test_retrying_the_same_deployment_waits_at_least_retry_after_capped() -> None:
    answers = iter([_answer(429, retry_after="0.3"), _answer(429, retry_after="60"), _answer(503)])
    patient = CONFIG.replace("failures_to_cool = 2", "failures_to_cool = 9")
    built = gateway({"one": lambda _: next(answers, _answer(200))}, patient)
    _, clock = _router(built)
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", json={**ASK, "model": "solo"})
    assert answer.status_code == 200  # the fourth attempt (retries = 3)
    # 0.1 s × 2^(n-1), at least the 429's retry-after, at most backoff_max_seconds
    assert clock.slept == [0.3, 1.0, 0.4]
    assert (
        'interlock_upstream_retries_total{upstream="one",kind="same_deployment"} 3'
        in built.metrics.render()
    )


async def test_a_deployment_sends_its_own_key() -> None:
    keys: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["authorization"])
        return _answer(200)

    built = gateway({"one": record, "two": record}, CONFIG)
    async with client(built) as http:
        for _ in range(2):
            assert (await http.post("/v1/chat/completions", json=ASK)).status_code == 200
    assert keys == ["Bearer sk-upstream-SECRET-123", "Bearer sk-other"]


@pytest.mark.parametrize("error", [httpx.ReadTimeout, httpx.RemoteProtocolError])
async def test_a_failure_after_the_request_was_written_is_never_resent(
    error: type[httpx.HTTPError],
) -> None:
    sent: list[str] = []

    def broken(request: httpx.Request) -> httpx.Response:
        sent.append("one")
        raise error("gone", request=request)

    def fine(request: httpx.Request) -> httpx.Response:
        sent.append("two")
        return _answer(200)

    built = gateway({"one": broken, "two": fine}, CONFIG)
    _router(built)
    async with client(built) as http:
        statuses = [
            (await http.post("/v1/chat/completions", json=ASK)).status_code for _ in range(5)
        ]
    failed = 504 if error is httpx.ReadTimeout else 502
    assert statuses == [failed, 200, failed, 200, 200]
    # not resent, yet counted: the second failure cools "one"
    assert sent == ["one", "two", "one", "two", "two"]


@pytest.mark.parametrize("error", [httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout])
async def test_a_request_never_written_goes_to_the_next_deployment(
    error: type[httpx.HTTPError],
) -> None:
    sent: list[str] = []

    def unreachable(name: str) -> Handler:
        def fail(request: httpx.Request) -> httpx.Response:
            sent.append(name)
            raise error("refused", request=request)

        return fail

    def fine(request: httpx.Request) -> httpx.Response:
        sent.append("two")
        return _answer(200)

    built = gateway({"one": unreachable("one"), "two": fine}, CONFIG)
    async with client(built) as http:
        assert (await http.post("/v1/chat/completions", json=ASK)).status_code == 200
    built = gateway({"one": unreachable("one"), "two": unreachable("two")}, CONFIG)
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", json=ASK)
    assert sent == ["one", "two", "one", "two"]
    assert answer.status_code == (502 if error is httpx.ConnectError else 504)
    assert answer.headers["x-interlock-translation"] == "none"


def test_retries_default_to_the_first_upstreams_max_retries() -> None:
    config = CONFIG.replace("retries = 1\n", "").replace(
        'base_url = "https://one.example/v1"',
        'base_url = "https://one.example/v1"\nmax_retries = 4',
    )
    router = gateway({}, config).proxy.router
    assert router is not None
    assert [group.retries for group in router.groups["pair"]] == [4]
    assert [group.retries for group in router.groups["solo"]] == [3, 4]


TOOL_LOOP = {
    "messages": [
        {"role": "user", "content": "call get_weather"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
}
GEMINI_ANSWER = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ]
}


def _by_model(sent: list[str], statuses: dict[str, int]) -> Handler:
    def answer(request: httpx.Request) -> httpx.Response:
        model = json.loads(request.content).get("model") or request.url.path
        sent.append(str(model))
        status = statuses.get(str(model), 200)
        return (
            _answer(status)
            if status != 200 or "gemini" not in request.url.path
            else (httpx.Response(200, json=GEMINI_ANSWER))
        )

    return answer


async def test_a_fallback_is_strict_even_when_its_own_upstream_degrades() -> None:
    sent: list[str] = []
    handler = _by_model(sent, {"m-strict": 503, "m-solo": 503, "m-one": 503, "m-two": 503})
    built = gateway({"one": handler, "two": handler, "gem": handler})
    async with client(built) as http:
        answer = await http.post(
            "/v1/chat/completions", json={**TOOL_LOOP, "model": "strict-route"}
        )
    # gem-3 skipped (strict), then solo until its deployment cools (two failures); solo's
    # fallback "pair" is not followed: a fallback's own fallbacks are not part of the route
    assert answer.status_code == 503
    assert answer.headers["x-interlock-translation"] == (
        "exact; fallback gem-3 skipped: missing_signature at messages[1].parts[0]"
    )
    assert sent == ["m-strict", "m-solo", "m-solo"]


async def test_a_route_saying_degrade_takes_the_fallback_degraded() -> None:
    sent: list[str] = []
    handler = _by_model(sent, {"m-degrade": 500})
    built = gateway({"one": handler, "gem": handler})
    async with client(built) as http:
        answer = await http.post(
            "/v1/chat/completions", json={**TOOL_LOOP, "model": "degrade-route"}
        )
    assert answer.status_code == 200
    header = answer.headers["x-interlock-translation"]
    assert header.startswith("degraded; ") and header.endswith("; fallback to gem-3")
    assert "signature" in header
    assert len(sent) == 2 and sent[1].endswith("gemini-3-flash:generateContent")


async def test_a_model_whose_deployments_all_cool_goes_straight_to_its_fallback() -> None:
    sent: list[str] = []
    handler = _by_model(sent, {"m-solo": 500})
    built = gateway({"one": handler, "two": handler}, CONFIG)
    _, _clock = _router(built)
    async with client(built) as http:
        solo = {**ASK, "model": "solo"}
        first = await http.post("/v1/chat/completions", json=solo)
        answer = await http.post("/v1/chat/completions", json=solo)
    assert first.status_code == answer.status_code == 200
    assert answer.headers["x-interlock-translation"] == "exact; fallback to pair"
    # two failures cool m-solo (then pair answers); the next request does not try it
    assert sent == ["m-solo", "m-solo", "m-one", "m-two"]


async def test_the_requested_models_own_refusal_is_the_answer_and_no_fallback_is_tried() -> None:
    sent: list[str] = []
    built = gateway({"one": _by_model(sent, {}), "gem": _by_model(sent, {})})
    async with client(built) as http:
        answer = await http.post(
            "/v1/chat/completions", json={**TOOL_LOOP, "model": "strict-gemini"}
        )
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "missing_signature"
    assert answer.headers["x-interlock-translation"] == "none"
    assert sent == []


async def test_health_is_shared_by_every_route_using_the_deployment() -> None:
    sent: list[str] = []
    built = gateway(
        {"one": _by_model(sent, {"m-one": 500, "m-solo": 500}), "two": _by_model(sent, {})}
    )
    _router(built)
    async with client(built) as http:
        for _ in range(3):  # pair: m-one fails twice (and cools), m-two answers
            await http.post("/v1/chat/completions", json=ASK)
        sent.clear()
        answer = await http.post("/v1/chat/completions", json={**ASK, "model": "solo"})
    assert answer.status_code == 200
    assert sent == ["m-solo", "m-solo", "m-two"]  # solo's fallback pair skips the cooled m-one


def _stream(events: list[dict[str, object]]) -> httpx.Response:
    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


CHUNKS: list[dict[str, object]] = [
    {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": "stop"}],
    }
]


@pytest.mark.parametrize(
    ("error", "switched"),
    [
        ({"message": "busy", "type": "server_error", "status": 503}, True),
        ({"message": "busy", "type": "server_error", "status": 429}, True),
        ({"message": "bad", "type": "invalid_request_error", "status": 400}, False),
        ({"message": "no status", "type": "server_error"}, False),  # could be anything
    ],
)
async def test_a_retryable_error_as_the_first_stream_event_moves_on(
    error: dict[str, object], switched: bool
) -> None:
    sent: list[str] = []

    def failing(request: httpx.Request) -> httpx.Response:
        sent.append("one")
        return _stream([{"error": error}])

    def fine(request: httpx.Request) -> httpx.Response:
        sent.append("two")
        return _stream(CHUNKS)

    built = gateway({"one": failing, "two": fine})
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", json={**ASK, "stream": True})
    assert answer.status_code == 200
    assert sent == (["one", "two"] if switched else ["one"])
    assert ('"Hello"' in answer.text) is switched
    assert ('"error"' in answer.text) is not switched


async def test_when_every_stream_fails_at_its_first_event_the_client_gets_an_error_answer() -> None:
    busy = {"error": {"message": "busy", "type": "server_error", "status": 503}}
    built = gateway({"one": lambda _: _stream([busy]), "two": lambda _: _stream([busy])})
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", json={**ASK, "stream": True})
    assert answer.status_code == 503
    assert answer.headers["content-type"] == "application/json"
    assert "busy" in answer.json()["error"]["message"]


async def test_a_client_gone_while_a_stream_waits_for_its_first_event_closes_the_upstream() -> None:
    """The gateway holds a routed stream until its first event: a client leaving meanwhile
    must still free (close) the upstream connection."""
    head_only = Reply([b": keep-alive\n\n"], ending="stall")  # a comment: no event yet
    async with upstream(lambda _path, _body: head_only) as server:
        config = f"""
[store]
url = "memory://"

[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "{server.url}/v1"

[[models]]
name = "routed"
fallbacks = ["plain"]
deployments = [{{ upstream = "chat", model = "m-routed" }}]

[[models]]
name = "plain"
upstream = "chat"
model = "m-plain"
"""
        built = build_gateway(parse_config(config, {}), store=open_store("memory://"))
        app = create_app(built)
        gone = asyncio.Event()
        sent: list[Message] = []
        body = json.dumps({**ASK, "model": "routed", "stream": True}).encode()
        read: list[bool] = []

        async def receive() -> Message:
            if not read:
                read.append(True)
                return {"type": "http.request", "body": body}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", b"localhost"), (b"content-type", b"application/json")],
        }
        call = asyncio.ensure_future(app(scope, receive, send))
        await until(lambda: server.open_connections == 1 and bool(server.requests))
        gone.set()
        await asyncio.wait_for(call, 5)
        await until(lambda: not server.open_connections)  # closed by the gateway
        await built.close()
    assert sent == []  # nothing, not even the status line, reached the client
    assert len(server.requests) == 1
