"""The browser guard over real HTTP and WebSockets on loopback: foreign origins, form posts,
foreign ``Host`` headers (DNS rebinding) and CORS preflights, with raw headers as an
attacker's page or a rebinding DNS name would send them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from interlock.gateway.agui import SERVER_OPTIONS
from interlock.gateway.app import build_gateway, create_app, refusal_body
from interlock.gateway.config import parse_config
from interlock.gateway.dialects import ingress_dialects
from interlock.gateway.guard import (
    BrowserGuard,
    BrowserPolicy,
    FrontDoor,
    host_name,
    is_loopback_name,
)
from interlock.gateway.lifecycle import DrainGate, Lifecycle
from tests.gateway.agui.harness import CONFIG, TOOLS, Server, new_id, run_input, user
from tests.gateway.agui.tools import EXECUTIONS
from tests.gateway.serving import serve

FOREIGN = "http://evil.example"
APP_ORIGIN = "http://app.example:3000"
RUN_HEADERS = {"content-type": "application/json"}


def _server(tmp: str, server_lines: str) -> Server:
    text = CONFIG.format(state_dir=tmp, store="memory://", max_body=65536, tools=TOOLS)
    text = text.replace("[server]\n", "[server]\n" + server_lines, 1)
    app = create_app(build_gateway(parse_config(text, {})))
    return Server(app, options=dict(SERVER_OPTIONS)).start()


@pytest.fixture(scope="module")
def open_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """No keys; one CORS origin."""
    server = _server(str(tmp_path_factory.mktemp("guard")), f'cors_origins = ["{APP_ORIGIN}"]\n')
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keyed_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Keys configured, one extra allowed (non-CORS) origin, any origin for CORS not set."""
    lines = 'api_keys = ["sk-guard"]\nallowed_origins = ["http://ws-only.example"]\n'
    server = _server(str(tmp_path_factory.mktemp("guard-keys")), lines)
    yield server
    server.stop()


def _weather_run(city: str) -> str:
    return json.dumps(run_input(new_id("t"), [user(f'call get_weather with {{"city":"{city}"}}')]))


def _post_run(server: Server, body: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{server.url}/agui/assistant", content=body, headers=headers, timeout=20)


# ------------------------------------------------------------------ Origin


def test_a_foreign_origin_cannot_start_a_run_over_sse(open_gateway: Server) -> None:
    city = new_id("city")
    response = _post_run(open_gateway, _weather_run(city), {**RUN_HEADERS, "origin": FOREIGN})
    assert response.status_code == 403
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in response.headers
    assert EXECUTIONS["get_weather", city] == 0


@pytest.mark.parametrize("origin", ["null", "http://127.0.0.1.evil.example", "file://"])
def test_opaque_and_lookalike_origins_are_refused(open_gateway: Server, origin: str) -> None:
    response = _post_run(open_gateway, _weather_run("x"), {**RUN_HEADERS, "origin": origin})
    assert response.status_code == 403


def test_same_origin_and_originless_requests_run(open_gateway: Server) -> None:
    for headers in ({"origin": open_gateway.url}, {}):
        city = new_id("city")
        response = _post_run(open_gateway, _weather_run(city), {**RUN_HEADERS, **headers})
        assert response.status_code == 200 and '"RUN_FINISHED"' in response.text
        assert EXECUTIONS["get_weather", city] == 1
        assert "access-control-allow-origin" not in response.headers


async def test_a_foreign_origin_cannot_open_the_websocket(open_gateway: Server) -> None:
    url = f"{open_gateway.ws_url}/agui/assistant/ws"
    with pytest.raises(InvalidStatus) as refused:
        await connect(url, origin=FOREIGN)
    assert refused.value.response.status_code == 403
    body = json.loads(refused.value.response.body or b"{}")
    assert body["error"]["code"] == "origin_not_allowed"
    async with connect(url, origin=open_gateway.url) as socket:
        await socket.send(json.dumps(run_input(new_id("t"), [user("hi")])))
        assert json.loads(await socket.recv())["type"] == "RUN_STARTED"


async def test_allowed_origins_open_websockets_without_cors(keyed_gateway: Server) -> None:
    url = f"{keyed_gateway.ws_url}/agui/assistant/ws"
    offered = ["interlock", "interlock.key.sk-guard"]
    async with connect(url, origin="http://ws-only.example", subprotocols=offered) as socket:
        assert socket.subprotocol == "interlock"
        assert "sk-guard" not in str(socket.response.headers)
        await socket.send(json.dumps(run_input(new_id("t"), [user("hi")])))
        assert json.loads(await socket.recv())["type"] == "RUN_STARTED"


def test_allowed_origins_get_no_cors(keyed_gateway: Server) -> None:
    preflight = httpx.options(
        f"{keyed_gateway.url}/agui/assistant",
        headers={"origin": "http://ws-only.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers


async def test_a_websocket_without_a_key_is_refused_with_401(keyed_gateway: Server) -> None:
    url = f"{keyed_gateway.ws_url}/agui/assistant/ws"
    for offered in (None, ["interlock", "interlock.key.wrong"]):
        with pytest.raises(InvalidStatus) as refused:
            await connect(url, subprotocols=offered)
        assert refused.value.response.status_code == 401
        assert b"invalid_api_key" in refused.value.response.body


def test_proxy_refusals_come_in_the_dialect_shape(open_gateway: Server) -> None:
    chat = httpx.post(
        f"{open_gateway.url}/v1/chat/completions",
        json={"model": "model", "messages": [{"role": "user", "content": "hi"}]},
        headers={"origin": FOREIGN},
    )
    assert chat.status_code == 403
    assert chat.json()["error"]["code"] == "origin_not_allowed"
    assert chat.json()["error"]["type"]  # OpenAI's shape
    gemini = httpx.post(
        f"{open_gateway.url}/v1beta/models/model:generateContent",
        json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        headers={"origin": FOREIGN},
    )
    assert gemini.status_code == 403
    assert gemini.json()["error"]["status"] == "PERMISSION_DENIED"


# ------------------------------------------------------------------ form posts


@pytest.mark.parametrize(
    "content_type",
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", None],
)
def test_a_run_must_be_posted_as_json(open_gateway: Server, content_type: str | None) -> None:
    city = new_id("city")
    headers = {"content-type": content_type} if content_type else {}
    response = _post_run(open_gateway, _weather_run(city), headers)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert EXECUTIONS["get_weather", city] == 0
    charset = _post_run(
        open_gateway, _weather_run(city), {"content-type": "application/json; charset=utf-8"}
    )
    assert charset.status_code == 200


# ------------------------------------------------------------------ Host (DNS rebinding)


@pytest.mark.parametrize(
    ("path", "shape_key"),
    [("/healthz", "code"), ("/v1/models", "type"), ("/v1beta/models", "status")],
)
def test_a_foreign_host_is_refused_without_keys(
    open_gateway: Server, path: str, shape_key: str
) -> None:
    response = httpx.get(f"{open_gateway.url}{path}", headers={"host": "rebound.evil.example"})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error[shape_key] and "host_not_allowed" in json.dumps(error)


def test_a_rebound_page_cannot_run_or_read(open_gateway: Server) -> None:
    city = new_id("city")
    port = open_gateway.port
    headers = {**RUN_HEADERS, "host": f"rebound.evil.example:{port}"}
    headers["origin"] = f"http://rebound.evil.example:{port}"  # same-origin to the browser
    response = _post_run(open_gateway, _weather_run(city), headers)
    assert response.status_code == 403 and response.json()["error"]["code"] == "host_not_allowed"
    assert EXECUTIONS["get_weather", city] == 0


async def test_a_rebound_websocket_is_refused(open_gateway: Server) -> None:
    # The URL's host is the Host header; the connection goes to the gateway on loopback.
    url = f"ws://rebound.evil.example:{open_gateway.port}/agui/assistant/ws"
    with pytest.raises(InvalidStatus) as refused:
        await connect(url, host="127.0.0.1", port=open_gateway.port)
    assert refused.value.response.status_code == 403
    assert b"host_not_allowed" in refused.value.response.body


@pytest.mark.parametrize("host", ["localhost:1", "127.0.0.2", "[::1]:8787", "app.localhost"])
def test_loopback_hosts_pass(open_gateway: Server, host: str) -> None:
    assert httpx.get(f"{open_gateway.url}/healthz", headers={"host": host}).status_code == 200


def test_with_keys_the_host_is_not_checked(keyed_gateway: Server) -> None:
    headers = {"host": "gateway.example.com", "authorization": "Bearer sk-guard"}
    assert httpx.get(f"{keyed_gateway.url}/v1/models", headers=headers).status_code == 200


def test_the_policy_decisions() -> None:
    policy = BrowserPolicy(
        check_host=True,
        allowed_hosts=frozenset({"gw.internal"}),
        allowed_origins=frozenset(),
        cors_origins=frozenset({APP_ORIGIN}),
    )
    assert policy.host_allowed("gw.internal:80") and not policy.host_allowed(None)
    assert not policy.host_allowed("gw.internal.evil.example")
    assert host_name("[::1]:80") == "[::1]" and is_loopback_name("[::1]")
    assert not is_loopback_name("localhost.evil.example")
    assert policy.origin_allowed("http://gw.internal:8787", "gw.internal:8787")
    assert not policy.origin_allowed("https://gw.internal:8788", "gw.internal:8787")
    assert policy.cors_origin("HTTP://APP.EXAMPLE:3000") == "HTTP://APP.EXAMPLE:3000"
    assert policy.cors_origin("http://app.example:3001") is None


def test_host_decisions_hold_when_repeated_and_past_the_kept_ones() -> None:
    policy = BrowserPolicy(
        check_host=True,
        allowed_hosts=frozenset({"gw.internal"}),
        allowed_origins=frozenset(),
        cors_origins=frozenset(),
    )
    hosts = [f"rebound-{number}.evil.example" for number in range(600)]
    hosts += [f"127.0.0.{number % 250 + 1}:{number}" for number in range(600)]
    for _ in range(2):
        assert not any(policy.host_allowed(host) for host in hosts[:600])
        assert all(policy.host_allowed(host) for host in hosts[600:])
        assert policy.host_allowed("GW.internal:1") and not policy.host_allowed("gw.internal.x")


def test_a_refused_host_stays_refused_on_the_same_connection(open_gateway: Server) -> None:
    with httpx.Client(base_url=open_gateway.url, timeout=20) as http:
        for _ in range(3):
            assert http.get("/healthz").status_code == 200
            refused = http.get("/healthz", headers={"host": "rebound.evil.example"})
            assert refused.status_code == 403


# ------------------------------------------------------------------ CORS


def _preflight(server: Server, path: str, origin: str, **headers: str) -> httpx.Response:
    request_headers = {"origin": origin, "access-control-request-method": "POST", **headers}
    return httpx.options(f"{server.url}{path}", headers=request_headers)


@pytest.mark.parametrize("path", ["/agui/assistant", "/v1/chat/completions", "/v1/responses"])
def test_preflight_for_an_allowed_origin(open_gateway: Server, path: str) -> None:
    response = _preflight(
        open_gateway,
        path,
        APP_ORIGIN,
        **{"access-control-request-headers": "content-type, authorization, x-stainless-os"},
    )
    assert response.status_code == 204
    headers = response.headers
    assert headers["access-control-allow-origin"] == APP_ORIGIN
    assert set(headers["access-control-allow-methods"].split(", ")) == {"GET", "POST", "OPTIONS"}
    assert headers["access-control-allow-headers"] == "content-type, authorization, x-stainless-os"
    assert headers["access-control-max-age"] == "600"
    assert "Origin" in headers["vary"]
    assert "access-control-allow-credentials" not in headers


def test_preflight_for_a_foreign_origin_is_refused(open_gateway: Server) -> None:
    response = _preflight(open_gateway, "/agui/assistant", FOREIGN)
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers
    assert response.headers["vary"] == "Origin"


def test_preflight_rejects_malformed_header_lists_and_answers_private_network(
    open_gateway: Server,
) -> None:
    response = _preflight(
        open_gateway,
        "/agui/assistant",
        APP_ORIGIN,
        **{
            "access-control-request-headers": "content-type; evil=1",
            "access-control-request-private-network": "true",
        },
    )
    assert response.status_code == 204
    assert "access-control-allow-headers" not in response.headers
    assert response.headers["access-control-allow-private-network"] == "true"


def test_cors_answers_carry_the_origin_and_expose_the_translation(open_gateway: Server) -> None:
    run = _post_run(open_gateway, _weather_run("Oslo"), {**RUN_HEADERS, "origin": APP_ORIGIN})
    assert run.status_code == 200 and '"RUN_FINISHED"' in run.text
    assert run.headers["access-control-allow-origin"] == APP_ORIGIN
    assert run.headers["vary"] == "Origin"
    chat = httpx.post(
        f"{open_gateway.url}/v1/chat/completions",
        json={"model": "model", "messages": [{"role": "user", "content": "hi"}]},
        headers={"origin": APP_ORIGIN},
        timeout=20,
    )
    assert chat.status_code == 200
    assert chat.headers["access-control-allow-origin"] == APP_ORIGIN
    assert "x-interlock-translation" in chat.headers["access-control-expose-headers"]
    assert "access-control-allow-credentials" not in chat.headers
    plain = httpx.get(f"{open_gateway.url}/healthz")
    assert plain.headers["vary"] == "Origin"  # caches must key on Origin


def test_a_wildcard_allows_every_origin_without_credentials(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = _server(str(tmp_path_factory.mktemp("guard-any")), 'cors_origins = ["*"]\n')
    try:
        response = _preflight(server, "/agui/assistant", "https://anyone.example")
        assert response.status_code == 204
        assert response.headers["access-control-allow-origin"] == "*"
        assert "vary" not in response.headers
        assert "access-control-allow-credentials" not in response.headers
        run = _post_run(server, _weather_run("Rome"), {**RUN_HEADERS, "origin": "null"})
        assert run.status_code == 200 and run.headers["access-control-allow-origin"] == "*"
    finally:
        server.stop()


def test_metrics_need_a_key_when_keys_are_configured(keyed_gateway: Server) -> None:
    assert httpx.get(f"{keyed_gateway.url}/metrics").status_code == 401
    keyed: dict[str, Any] = {"authorization": "Bearer sk-guard"}
    answer = httpx.get(f"{keyed_gateway.url}/metrics", headers=keyed)
    assert answer.status_code == 200 and "interlock_requests_total" in answer.text


# ------------------------------------------------------------------ keys never in logs

SECRET = "sk-query-SECRET-4417"
WRONG = "sk-wrong-SECRET-9921"


async def test_a_key_in_the_query_string_never_reaches_the_logs(tmp_path: Path) -> None:
    text = CONFIG.format(
        state_dir=tmp_path / "state", store="memory://", max_body=65536, tools=TOOLS
    ).replace("[server]\n", f'[server]\naccess_log = true\napi_keys = ["{SECRET}"]\n', 1)
    config = tmp_path / "interlock.toml"
    config.write_text(text)
    with serve(config, tmp_path) as url:
        async with httpx.AsyncClient(base_url=url, timeout=20) as http:
            for key in (SECRET, WRONG):
                await _every_carrier(http, url, key)
    log = _logs(tmp_path)
    assert SECRET not in log and WRONG not in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert {"/v1/chat/completions"} <= {line["path"] for line in lines}


def _logs(directory: Path) -> str:
    return "".join(path.read_text() for path in directory.glob("serve-*.log"))


async def _every_carrier(http: httpx.AsyncClient, url: str, key: str) -> None:
    body = {"model": "model", "messages": [{"role": "user", "content": "hi"}]}
    await http.post(f"/v1/chat/completions?key={key}", json=body)
    await http.post(f"/agui/assistant?key={key}", content=_weather_run("Oslo"), headers=RUN_HEADERS)
    await http.get(f"/metrics?key={key}")
    ws = f"ws{url.removeprefix('http')}/agui/assistant/ws"
    with contextlib.suppress(InvalidStatus):
        async with connect(f"{ws}?key={key}") as socket:
            await socket.send(json.dumps(run_input(new_id("t"), [user("hi")])))
            await socket.recv()
    with contextlib.suppress(InvalidStatus):
        async with connect(ws, subprotocols=["interlock", f"interlock.key.{key}"]):  # type: ignore[list-item]  # plain strings are subprotocols
            pass


class _Inner:
    """The app behind the front: records what reached it and the requests in flight."""

    def __init__(self, lifecycle: Lifecycle) -> None:
        self.lifecycle = lifecycle
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.seen.append((scope["path"], self.lifecycle.requests))
        body = b"ok"
        headers = [(b"content-type", b"text/plain"), (b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _answer(app: ASGIApp, scope: Scope) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(dict(scope), receive, send))
    return sent


_HEADER_VALUES = [b"127.0.0.1:8080", b"localhost", b"evil.example", b"http://127.0.0.1:8080", b"x"]
_OPTIONAL = st.one_of(st.none(), st.sampled_from(_HEADER_VALUES))


@st.composite
def _request_headers(draw: st.DrawFn) -> list[tuple[bytes, bytes]]:
    """A ``Host`` and an ``Origin`` (each maybe), other headers, sometimes a name twice."""
    headers = [(b"accept", b"*/*")]
    for name in (b"host", b"origin"):
        value = draw(_OPTIONAL)
        if value is not None:
            headers.append((name, value))
    extra = st.sampled_from([b"host", b"origin", b"access-control-request-method", b"accept"])
    headers += draw(st.lists(st.tuples(extra, st.sampled_from(_HEADER_VALUES)), max_size=1))
    return draw(st.permutations(headers))


@settings(max_examples=400, deadline=None)
@given(
    headers=_request_headers(),
    path=st.sampled_from(["/v1/chat/completions", "/healthz", "/v1beta/x", "/agui"]),
    method=st.sampled_from(["POST", "OPTIONS"]),
    keyed=st.booleans(),
    cors=st.sampled_from([(), ("*",), ("http://app.example",)]),
    draining=st.booleans(),
)
def test_the_front_door_answers_as_the_gate_and_the_guard(
    headers: list[tuple[bytes, bytes]],
    path: str,
    method: str,
    keyed: bool,
    cors: tuple[str, ...],
    draining: bool,
) -> None:
    policy = BrowserPolicy(
        check_host=not keyed,
        allowed_hosts=frozenset(),
        allowed_origins=frozenset(),
        cors_origins=frozenset(cors),
    )
    scope: Scope = {"type": "http", "method": method, "path": path, "headers": headers}
    outcomes = []
    for fronted in (True, False):
        lifecycle = Lifecycle()
        if draining:
            lifecycle.state = "draining"
        inner = _Inner(lifecycle)
        refusal = refusal_body(ingress_dialects())
        gated = DrainGate(BrowserGuard(inner, policy=policy, refusal=refusal), lifecycle=lifecycle)
        app = FrontDoor(inner, gated, lifecycle=lifecycle, policy=policy) if fronted else gated
        outcomes.append((_answer(app, scope), inner.seen, lifecycle.requests))
    assert outcomes[0] == outcomes[1]
