"""``UpstreamChatModel``: a codec plus the upstream client, every failure a RUN_ERROR code."""

from __future__ import annotations

import json

import httpx
import pytest

from interlock.gateway.agui import UPSTREAM_CODES, UpstreamChatModel, gateway_binding
from interlock.gateway.app import build_gateway
from interlock.gateway.config import parse_config
from interlock.transcript import (
    Message,
    PartStarted,
    Request,
    ResponseFinished,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Update,
)

CONFIG = """
[store]
url = "memory://"

[[upstreams]]
name = "up"
protocol = "{protocol}"
base_url = "{base_url}"
max_retries = 0

[[models]]
name = "model"
upstream = "up"
model = "upstream-model"
"""

HELLO = Request(
    model="upstream-model", messages=(Message(role="user", parts=(TextPart(text="hi"),)),)
)


def model_for(
    handler: httpx.MockTransport | None, protocol: str = "openai-chat"
) -> UpstreamChatModel:
    base_url = "https://gemini.example" if protocol == "gemini" else "https://up.example/v1"
    config = parse_config(CONFIG.format(protocol=protocol, base_url=base_url), {})
    transports = {"up": handler} if handler is not None else {}
    gateway = build_gateway(config, transports=transports)
    return UpstreamChatModel(gateway.proxy.routes["model"].upstream)


async def collect(model: UpstreamChatModel, request: Request = HELLO) -> list[Update]:
    return [update async for update in model.stream(request)]


def chat_stream(*chunks: str) -> httpx.Response:
    body = "".join(f"data: {chunk}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


CHUNK = json.dumps(
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "upstream-model",
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": "Hello"}, "finish_reason": None}
        ],
    }
)
LAST = json.dumps(
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "upstream-model",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
)


async def test_a_streamed_answer_decodes_and_the_request_streams() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return chat_stream(CHUNK, LAST)

    updates = await collect(model_for(httpx.MockTransport(handler)))
    assert seen[0]["stream"] is True and seen[0]["model"] == "upstream-model"
    assert any(isinstance(u, PartStarted) for u in updates)
    assert isinstance(updates[-1], ResponseFinished)


def failing(error: Exception) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    return httpx.MockTransport(handler)


@pytest.mark.parametrize(
    ("transport", "code", "status"),
    [
        (
            httpx.MockTransport(lambda r: httpx.Response(500, json={"error": {"message": "boom"}})),
            "UPSTREAM_ERROR",
            500,
        ),
        (
            httpx.MockTransport(lambda r: httpx.Response(429, text="slow down")),
            "UPSTREAM_ERROR",
            429,
        ),
        (failing(httpx.ReadTimeout("slow")), "UPSTREAM_TIMEOUT", 504),
        (failing(httpx.ConnectError("refused")), "UPSTREAM_UNAVAILABLE", 502),
        (httpx.MockTransport(lambda r: chat_stream("{not json")), "UPSTREAM_INVALID_STREAM", 502),
    ],
    ids=["http-500", "http-429", "timeout", "connect", "malformed-stream"],
)
async def test_failures_end_with_one_stream_failed(
    transport: httpx.MockTransport, code: str, status: int
) -> None:
    updates = await collect(model_for(transport))
    failed = updates[-1]
    assert isinstance(failed, StreamFailed)
    assert (failed.code, failed.status) == (code, status)
    assert failed.code in UPSTREAM_CODES
    assert not any(isinstance(u, StreamFailed) for u in updates[:-1])


async def test_a_stream_cut_mid_way_is_an_upstream_error() -> None:
    class Broken(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[override]  # an async generator is the point
            yield f"data: {CHUNK}\n\n".encode()
            raise httpx.RemoteProtocolError("peer closed")

    transport = httpx.MockTransport(
        lambda r: httpx.Response(
            200, stream=Broken(), headers={"content-type": "text/event-stream"}
        )
    )
    updates = await collect(model_for(transport))
    assert isinstance(updates[-1], StreamFailed) and updates[-1].code == "UPSTREAM_ERROR"
    assert any(isinstance(u, PartStarted) for u in updates)


async def test_a_lossy_history_is_refused_before_sending() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    call = ToolCallPart(call_id="c1", name="get_weather", arguments="{}")
    history = (
        Message(role="user", parts=(TextPart(text="weather?"),)),
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", output=(TextPart(text="sun"),)),)),
    )
    request = Request(model="upstream-model", messages=history)
    updates = await collect(model_for(httpx.MockTransport(handler), "gemini"), request)
    assert [type(u) for u in updates] == [StreamFailed]
    assert isinstance(updates[0], StreamFailed) and updates[0].code == "LOSSY_HISTORY"
    assert sent == []


async def test_a_model_configured_without_signatures_sends_an_unsigned_history() -> None:
    """``thought_signatures = "optional"`` on the agent's model: the same unsigned history
    the default rule refuses above is sent (agents get the rule through the gateway)."""
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        chunk = {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ]
        }
        body = f"data: {json.dumps(chunk)}\n\n"
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    text = CONFIG.format(protocol="gemini", base_url="https://gemini.example")
    text += 'thought_signatures = "optional"\n\n[[agents]]\nname = "agent"\nmodel = "model"\n'
    gateway = build_gateway(parse_config(text, {}), transports={"up": httpx.MockTransport(handler)})
    model = gateway_binding(gateway).agents["agent"].model
    assert isinstance(model, UpstreamChatModel)
    call = ToolCallPart(call_id="c1", name="get_weather", arguments="{}")
    history = (
        Message(role="user", parts=(TextPart(text="weather?"),)),
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", output=(TextPart(text="sun"),)),)),
    )
    updates = await collect(model, Request(model="upstream-model", messages=history))
    assert isinstance(updates[-1], ResponseFinished)
    body = json.loads(sent[0].content)
    assert "thoughtSignature" not in body["contents"][1]["parts"][0]
