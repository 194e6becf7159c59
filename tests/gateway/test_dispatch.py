"""The gateway's direct route dispatch over real HTTP on loopback: requests a route fully
matches are answered by it, everything else as Starlette's router would answer it (404 and
405 in the caller's dialect, the first matching route winning, handler errors)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence

import google.genai as genai
import httpx
import openai
import pytest
import uvicorn
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interlock.gateway.app import Gateway, create_app
from interlock.gateway.dispatch import DirectRoutes, GatewayApp
from interlock.gateway.server import DrainingServer
from tests.gateway.agui.harness import Server
from tests.gateway.helpers import Recorder, chat_completion, gateway


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ok_chat(_: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=chat_completion())


async def _teapot(_: Request) -> Response:
    raise HTTPException(418, "short and stout")


async def _missing(_: Request) -> Response:
    raise HTTPException(404)


async def _broken(_: Request) -> Response:
    raise RuntimeError("a bug")


async def _breaks_mid_stream(_: Request) -> Response:
    async def pieces() -> AsyncIterator[bytes]:
        yield b"data: one\n\n"
        raise RuntimeError("a bug mid-stream")

    return StreamingResponse(pieces(), media_type="text/event-stream")


def _sync(_: Request) -> Response:
    return PlainTextResponse("sync")


async def _named(request: Request) -> Response:
    return JSONResponse({"name": request.path_params["name"], "route": request.scope["route"].path})


async def _where(request: Request) -> Response:
    return JSONResponse({"route": request.scope["route"].path})


class _Bare:
    """A bare ASGI app as an endpoint (Starlette calls it with the scope as it is)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await PlainTextResponse(f"bare {scope['method']}")(scope, receive, send)


def _extra(_: Gateway) -> Sequence[BaseRoute]:
    return [
        Route("/test/teapot", _teapot),
        Route("/test/missing", _missing),
        Route("/test/broken", _broken),
        # GET: no request body left unread when the server closes after the error
        Route("/v1/test/broken", _broken, methods=["GET"]),
        Route("/v1beta/test/broken", _broken, methods=["GET"]),
        Route("/test/stream-breaks", _breaks_mid_stream),
        Route("/test/sync", _sync),
        Route("/test/items/{name}", _named),
        Route("/test/bare", _Bare(), methods=["PUT"]),
        # shadowed for GET by the earlier GET /v1/models/{model:path}; POST reaches it
        Route("/v1/models/shadowed", _where, methods=["GET", "POST"]),
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    built = gateway({"chat": Recorder(_ok_chat)})
    running = Server(create_app(built, extra_routes=[_extra]), options={"lifespan": "on"}).start()
    yield running
    running.stop()


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=20) as client:
        yield client


def test_the_sdks_are_answered_on_fixed_and_parameter_paths(server: Server) -> None:
    chat = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    answer = chat.chat.completions.create(
        model="to-chat", messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content
    options = genai_types.HttpOptions(base_url=server.url)
    gemini = genai.Client(api_key="unused", http_options=options)
    reply = gemini.models.generate_content(model="to-chat", contents="hi")
    assert reply.text
    with pytest.raises(genai_errors.ClientError) as missing:
        gemini.models.generate_content(model="no-such-model", contents="hi")
    assert missing.value.code == 404


def test_unknown_paths_and_methods_answer_in_the_dialect(http: httpx.Client) -> None:
    missing = http.post("/v1/chat/completion", json={})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = http.get("/v1/chat/completions")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"
    gemini = http.get("/v1beta/models/to-gemini:generateContent")
    assert gemini.status_code in (404, 405) and "status" in gemini.json()["error"]
    assert http.delete("/test/bare").json()["error"]["code"] == "method_not_allowed"


def test_a_handler_error_is_the_dialect_error(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_: object) -> None:
        raise RuntimeError("a bug in admission")

    app = server.app
    built: Gateway = app.state.gateway
    monkeypatch.setattr(built.proxy.operations, "admit", broken)
    chat = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError) as failed:
        chat.chat.completions.create(model="to-chat", messages=[{"role": "user", "content": "x"}])
    assert failed.value.status_code == 500
    assert "internal gateway error" in str(failed.value.body)


def test_http_exceptions_answer_as_starlette_would(http: httpx.Client) -> None:
    teapot = http.get("/test/teapot")
    assert (teapot.status_code, teapot.text) == (418, "short and stout")
    missing = http.get("/test/missing")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_a_bug_in_a_route_is_an_error_in_the_shape_of_its_api(server: Server) -> None:
    """A route's exception is answered with a JSON 500 in the shape of the API the path
    belongs to (the OpenAI SDK reads it as an API error); the server goes on."""
    chat = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError) as failed:
        chat.get("/test/broken", cast_to=httpx.Response)
    assert failed.value.status_code == 500
    assert failed.value.code == "internal_error"
    assert failed.value.body == {
        "message": "internal gateway error",
        "type": "server_error",
        "param": None,
        "code": "internal_error",
    }
    # each on its own connection: the server closes one after answering a bug
    gemini = httpx.get(f"{server.url}/v1beta/test/broken", timeout=20)
    other = httpx.get(f"{server.url}/test/broken", timeout=20)
    assert gemini.status_code == 500 and gemini.json()["error"]["status"] == "INTERNAL"
    assert other.status_code == 500
    assert other.json() == {
        "error": {"message": "internal gateway error", "code": "internal_error"}
    }
    assert httpx.get(f"{server.url}/healthz").status_code == 200  # the server goes on


def test_a_bug_after_the_answer_started_closes_the_connection(http: httpx.Client) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        http.get("/test/stream-breaks").read()
    assert http.get("/healthz").status_code == 200


def test_routes_get_their_parameters_and_the_first_match_wins(http: httpx.Client) -> None:
    assert http.get("/test/sync").text == "sync"
    named = http.get("/test/items/caf%C3%A9")
    assert named.json() == {"name": "café", "route": "/test/items/{name}"}
    assert http.head("/test/items/x").status_code == 200
    assert http.put("/test/bare").text == "bare PUT"
    shadowed = http.get("/v1/models/shadowed")  # the earlier model lookup answers
    assert shadowed.status_code == 404 and "route" not in shadowed.json()
    reached = http.post("/v1/models/shadowed")
    assert reached.json() == {"route": "/v1/models/shadowed"}


def test_the_plan_leaves_shadowed_and_unusual_routes_to_starlette(server: Server) -> None:
    stack = server.app.middleware_stack
    while not isinstance(stack, DirectRoutes):
        stack = stack.app  # type: ignore[attr-defined]  # the drain gate and the guard
    assert "/v1/chat/completions" in stack.fixed and "/test/bare" in stack.fixed
    assert "/v1/models/shadowed" not in stack.fixed and "/test/sync" not in stack.fixed


class _Stamp:
    """Middleware adding ``x-stamp`` to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-stamp", b"1")]
            await send(message)

        await self.app(scope, receive, stamped)


def test_added_middleware_sees_every_request() -> None:
    app = create_app(gateway({"chat": Recorder(_ok_chat)}))
    app.add_middleware(_Stamp)
    running = Server(app, options={"lifespan": "on"}).start()
    try:
        body = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
        answer = httpx.post(f"{running.url}/v1/chat/completions", json=body, timeout=20)
        missing = httpx.get(f"{running.url}/nothing", timeout=20)
    finally:
        running.stop()
    assert answer.status_code == 200 and answer.headers["x-stamp"] == "1"
    assert missing.status_code == 404 and missing.headers["x-stamp"] == "1"


def _draining_server(app: GatewayApp, port: int) -> tuple[DrainingServer, threading.Thread]:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    running = DrainingServer(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not running.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    return running, thread


def test_forwarded_headers_are_read_where_starlette_answers() -> None:
    """``interlock serve`` reads ``X-Forwarded-*`` inside Starlette's stack: a redirect
    there names the scheme the proxy says, as with uvicorn's own wrapping; the direct
    path answers as before."""
    app = create_app(gateway({"chat": Recorder(_ok_chat)}), extra_routes=[_extra])
    assert isinstance(app, GatewayApp)
    port = _free_port()
    running, thread = _draining_server(app, port)
    try:
        url = f"http://127.0.0.1:{port}"
        forwarded = {"x-forwarded-proto": "https", "x-forwarded-for": "10.1.2.3"}
        redirect = httpx.get(f"{url}/test/items/x/", headers=forwarded, timeout=20)
        body = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
        proxied = httpx.post(f"{url}/v1/chat/completions", json=body, headers=forwarded)
    finally:
        running.should_exit = True
        thread.join(timeout=10)
    assert not running.config.proxy_headers and app.trusted_proxies is not None
    assert redirect.status_code == 307
    assert redirect.headers["location"] == f"https://127.0.0.1:{port}/test/items/x"
    assert proxied.status_code == 200 and proxied.json()["choices"]
