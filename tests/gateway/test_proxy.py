"""The proxy pipeline against mock upstreams: routing, passthrough, every error case."""

from __future__ import annotations

import json
import logging
import pathlib

import httpx
import pytest

from interlock.gateway.config import UpstreamConfig
from interlock.gateway.model_field import rewrite_model
from interlock.gateway.stores import open_store
from interlock.gateway.vault import Lookup, ReasoningVault
from tests.gateway.helpers import (
    UPSTREAM_KEY,
    Recorder,
    chat_completion,
    client,
    gateway,
)

CHAT_BODY = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def ok_chat(_: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=chat_completion())


# ---------------------------------------------------------------- model rewrite


def test_rewrite_model_splices_only_the_model_value() -> None:
    body = b'{"model" : "a",  "messages":[{"role":"user","content":"say \\"model\\": \\"a\\""}]}'
    rewritten = rewrite_model(body, "a", "b/c\u00e9")
    assert rewritten == body.replace(b'"a",', json.dumps("b/c\u00e9").encode() + b",", 1)
    assert json.loads(rewritten)["messages"] == json.loads(body)["messages"]


def test_rewrite_model_falls_back_when_ambiguous() -> None:
    body = b'{"model":"a","metadata":{"model":"a"}}'
    assert json.loads(rewrite_model(body, "a", "b")) == {"model": "b", "metadata": {"model": "a"}}


# ---------------------------------------------------------------- passthrough


async def test_same_dialect_forwards_the_client_bytes_with_only_the_model_changed() -> None:
    upstream = Recorder(ok_chat)
    raw = b'{"model": "to-chat",   "messages": [{"role": "user", "content": "hi"}], "x_vendor": 1}'
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1/chat/completions", content=raw)
    assert answer.status_code == 200
    assert answer.headers["x-interlock-translation"] == "exact"
    assert upstream.requests[0].content == raw.replace(b'"to-chat"', b'"up-chat"')
    assert answer.json() == chat_completion()
    assert upstream.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"


async def test_cross_dialect_translates_both_ways() -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1beta/models/to-chat:generateContent", json=GEMINI_BODY)
    assert answer.status_code == 200
    assert answer.headers["x-interlock-translation"] == "translated"
    assert upstream.bodies[0]["model"] == "up-chat"
    assert upstream.bodies[0]["messages"] == [{"role": "user", "content": "hi"}]
    parts = answer.json()["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Hello"}]


async def test_client_headers_and_keys_are_not_forwarded() -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        await http.post(
            "/v1/chat/completions",
            json=CHAT_BODY,
            headers={"authorization": "Bearer client-key", "x-custom": "1"},
        )
    sent = upstream.requests[0].headers
    assert sent["authorization"] == f"Bearer {UPSTREAM_KEY}" and "x-custom" not in sent


# ---------------------------------------------------------------- client errors


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/v1/chat/completions", "openai"),
        ("/v1/responses", "openai"),
        ("/v1beta/models/to-chat:generateContent", "gemini"),
    ],
)
async def test_malformed_json_is_a_400_in_the_ingress_shape(path: str, shape: str) -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(path, content=b"{not json")
    assert answer.status_code == 400
    error = answer.json()["error"]
    if shape == "openai":
        assert error["type"] == "invalid_request_error" and "malformed JSON" in error["message"]
    else:
        assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert upstream.requests == []


async def test_non_object_body_is_a_400() -> None:
    async with client(gateway({"chat": Recorder(ok_chat)})) as http:
        answer = await http.post("/v1/chat/completions", json=[1, 2])
    assert answer.status_code == 400


async def test_wrongly_typed_field_is_a_400_naming_the_path() -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            "/v1/chat/completions", json={"model": "to-chat", "messages": "nope"}
        )
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "messages"
    assert upstream.requests == []


async def test_unknown_model_is_a_404_in_each_dialect() -> None:
    async with client(gateway({})) as http:
        openai = await http.post("/v1/chat/completions", json={**CHAT_BODY, "model": "ghost"})
        gemini = await http.post("/v1beta/models/ghost:generateContent", json=GEMINI_BODY)
    assert openai.status_code == 404 and "ghost" in openai.json()["error"]["message"]
    assert gemini.status_code == 404 and gemini.json()["error"]["status"] == "NOT_FOUND"


async def test_body_over_the_limit_is_a_413_declared_or_streamed() -> None:
    upstream = Recorder(ok_chat)
    big = json.dumps({**CHAT_BODY, "pad": "x" * 5000}).encode()

    async def chunked():  # no content-length: the limit applies while reading
        yield big[:3000]
        yield big[3000:]

    async with client(gateway({"chat": upstream})) as http:
        declared = await http.post("/v1/chat/completions", content=big)
        streamed = await http.post("/v1/chat/completions", content=chunked())
    assert declared.status_code == 413 and streamed.status_code == 413
    assert upstream.requests == []


async def test_lossy_history_is_refused_before_sending() -> None:
    upstream = Recorder(ok_chat)
    history = {
        "model": "to-gemini",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    }
    built = gateway({"gemini": upstream})
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", json=history)
        metrics = (await http.get("/metrics")).text
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert "messages[1].parts[0]" in error["message"] and error["param"] == "messages[1].parts[0]"
    assert upstream.requests == []
    assert 'interlock_lossy_history_refused_total{upstream="gemini"' in metrics


async def test_previous_response_id_cannot_cross_dialects() -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            "/v1/responses",
            json={"model": "to-chat", "input": "hi", "previous_response_id": "resp_1"},
        )
    assert answer.status_code == 400 and upstream.requests == []


# ---------------------------------------------------------------- upstream errors


async def test_upstream_error_keeps_its_status_in_the_ingress_shape() -> None:
    def refuse(_: httpx.Request) -> httpx.Response:
        return httpx.Response(
            400,
            json={
                "error": {
                    "code": 400,
                    "message": f"bad thing; key {UPSTREAM_KEY}",
                    "status": "INVALID_ARGUMENT",
                }
            },
        )

    async with client(gateway({"gemini": Recorder(refuse)})) as http:
        answer = await http.post("/v1/chat/completions", json={**CHAT_BODY, "model": "to-gemini"})
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert "bad thing" in message and UPSTREAM_KEY not in answer.text


async def test_same_dialect_upstream_error_is_forwarded_with_the_key_scrubbed() -> None:
    def refuse(_: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, json={"error": {"message": f"Incorrect API key {UPSTREAM_KEY}", "type": "auth"}}
        )

    async with client(gateway({"chat": Recorder(refuse)})) as http:
        answer = await http.post("/v1/chat/completions", json=CHAT_BODY)
    assert answer.status_code == 401
    assert UPSTREAM_KEY not in answer.text and "Incorrect API key ***" in answer.text


async def test_429_and_5xx_are_retried_then_passed_on() -> None:
    statuses = iter([503, 429, 200])

    def flaky(_: httpx.Request) -> httpx.Response:
        status = next(statuses)
        return httpx.Response(
            status, json=chat_completion() if status == 200 else {"error": {"message": "busy"}}
        )

    upstream = Recorder(flaky)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1/chat/completions", json=CHAT_BODY)
        metrics = (await http.get("/metrics")).text
    assert answer.status_code == 200 and len(upstream.requests) == 3
    assert 'interlock_upstream_retries_total{upstream="chat",kind="same_deployment"} 2' in metrics


async def test_retries_are_bounded() -> None:
    upstream = Recorder(lambda _: httpx.Response(500, json={"error": {"message": "down"}}))
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1/chat/completions", json=CHAT_BODY)
    assert answer.status_code == 500 and len(upstream.requests) == 3  # 1 + max_retries


async def test_unreachable_upstream_is_a_502_after_retries() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    upstream = Recorder(down)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1/chat/completions", json=CHAT_BODY)
    assert answer.status_code == 502 and len(upstream.requests) == 3
    assert answer.json()["error"]["code"] == "upstream_connect"


async def test_read_timeout_is_a_504_and_never_retried() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    upstream = Recorder(slow)
    async with client(gateway({"gemini": upstream})) as http:
        answer = await http.post("/v1beta/models/to-gemini:generateContent", json=GEMINI_BODY)
    assert answer.status_code == 504 and len(upstream.requests) == 1
    assert answer.json()["error"]["status"] == "DEADLINE_EXCEEDED"


async def test_invalid_upstream_response_is_a_502() -> None:
    upstream = Recorder(lambda _: httpx.Response(200, content=b"<html>oops</html>"))
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post("/v1/responses", json={"model": "to-chat", "input": "hi"})
    assert answer.status_code == 502


# ---------------------------------------------------------------- keys and logs


KEYED = """
[server]
api_keys = ["sk-client-1", {key = "sk-client-2", tenant = "team-2"}]
[store]
url = "memory://"
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "https://chat.example/v1"
api_key_env = "UP_KEY"
[[models]]
name = "to-chat"
upstream = "chat"
model = "up-chat"
"""


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_client_keys_are_required_and_map_to_a_tenant() -> None:
    captured = _Lines()
    logging.getLogger("interlock.access").addHandler(captured)
    built = gateway({"chat": Recorder(ok_chat)}, KEYED)
    try:
        async with client(built) as http:
            missing = await http.post("/v1/chat/completions", json=CHAT_BODY)
            wrong = await http.post(
                "/v1/chat/completions", json=CHAT_BODY, headers={"authorization": "Bearer nope"}
            )
            bearer = await http.post(
                "/v1/chat/completions",
                json=CHAT_BODY,
                headers={"authorization": "Bearer sk-client-2"},
            )
            goog = await http.post(
                "/v1beta/models/to-chat:generateContent",
                json=GEMINI_BODY,
                headers={"x-goog-api-key": "sk-client-1"},
            )
            query = await http.post(
                "/v1beta/models/to-chat:generateContent?key=sk-client-1", json=GEMINI_BODY
            )
            models = await http.get("/v1/models")
    finally:
        logging.getLogger("interlock.access").removeHandler(captured)
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert (bearer.status_code, goog.status_code, query.status_code) == (200, 200, 200)
    assert models.status_code == 401
    lines = [json.loads(line) for line in captured.lines]
    assert next(line["tenant"] for line in lines if line["status"] == 200) == "team-2"
    assert lines[-1]["tenant"].startswith("key-")
    text = "\n".join(captured.lines)
    for secret in ("sk-client-1", "sk-client-2", UPSTREAM_KEY, "key="):
        assert secret not in text


# ---------------------------------------------------------------- vault skipped without keys


@pytest.mark.parametrize("url", ["memory://", "sqlite:///{tmp}/vault.db"])
async def test_a_lookup_of_no_keys_is_the_empty_lookup_the_proxy_uses(
    url: str, tmp_path: pathlib.Path
) -> None:
    """The proxy skips ``look`` for a history with no vault keys (and no kept lookup),
    taking the empty ``Lookup`` instead: what ``look`` itself finds then."""
    store = open_store(url.replace("{tmp}", str(tmp_path)))
    config = UpstreamConfig(name="up", protocol="openai-responses", base_url="https://x.example")
    await store.vault_put("t", "up", {"reasoning:a": [1]})
    assert await ReasoningVault(store).look("t", config, []) == Lookup((), (), (), {})
