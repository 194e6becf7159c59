"""Broken tool-call pairing is refused before sending, for every upstream dialect, in the
client's own error shape (``gateway/pairing.py``; Chat upstreams: the Chat encoder)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai import AsyncOpenAI, BadRequestError

from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.app import Gateway, build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.pairing import find_unpaired
from interlock.gateway.stores import open_store
from interlock.transcript import Message, Request, TextPart, ToolCallPart, ToolResultPart

CONFIG = DEFAULT_CONFIG_TOML.replace("sqlite:///.interlock/interlock.db", "memory://")
MODELS = {
    "emulated-responses": "demo-responses",
    "emulated-chat": "demo-chat",
    "emulated-gemini": "demo-gemini",
    "emulated-anthropic": "demo-anthropic",
}
ORPHAN: Any = [
    {"role": "user", "content": "weather?"},
    {"role": "tool", "tool_call_id": "call_nowhere", "content": "sunny"},
]


@pytest.fixture
async def stack() -> AsyncIterator[tuple[Gateway, httpx.AsyncClient]]:
    built = build_gateway(parse_config(CONFIG, {}), store=open_store("memory://"))
    transport = httpx.ASGITransport(app=create_app(built))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        yield built, http


def _sent(built: Gateway) -> int:
    return sum(len(getattr(emulator, "received")) for emulator in built.emulators.values())  # noqa: B009


@pytest.mark.parametrize("upstream", sorted(MODELS))
async def test_an_orphan_tool_result_from_a_chat_client_is_refused_before_sending(
    stack: tuple[Gateway, httpx.AsyncClient], upstream: str
) -> None:
    built, http = stack
    sdk = AsyncOpenAI(base_url="http://localhost/v1", api_key="unused", http_client=http)
    with pytest.raises(BadRequestError) as caught:
        await sdk.chat.completions.create(model=MODELS[upstream], messages=ORPHAN)
    body: Any = caught.value.body
    assert body["code"] == "tool_pairing" and body["param"].startswith("messages[1]")
    assert _sent(built) == 0


async def test_a_call_without_its_output_from_a_responses_client_is_refused(
    stack: tuple[Gateway, httpx.AsyncClient],
) -> None:
    built, http = stack
    sdk = AsyncOpenAI(base_url="http://localhost/v1", api_key="unused", http_client=http)
    items: Any = [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"role": "user", "content": "and now?"},
    ]
    for model in ("demo-gemini", "demo-anthropic"):
        with pytest.raises(BadRequestError) as caught:
            await sdk.responses.create(model=model, input=items, store=False)
        body: Any = caught.value.body
        assert body["code"] == "tool_pairing"
        assert "call_1" in body["message"] and body["param"] == "messages[1].parts[0]"
    assert _sent(built) == 0


async def test_a_gemini_response_without_a_call_is_refused_in_gemini_shape(
    stack: tuple[Gateway, httpx.AsyncClient],
) -> None:
    built, http = stack
    client = genai.Client(
        api_key="unused",
        http_options=types.HttpOptions(
            base_url="http://localhost", httpx_async_client=http, api_version="v1beta"
        ),
    )
    answer = types.Part(
        function_response=types.FunctionResponse(id="c9", name="get_weather", response={"r": 1})
    )
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather?")]),
        types.Content(role="user", parts=[answer]),
    ]
    for model in ("demo-responses", "demo-anthropic"):
        with pytest.raises(genai_errors.ClientError) as caught:
            await client.aio.models.generate_content(model=model, contents=contents)
        assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
        assert "answers no earlier tool call" in str(caught.value.message)
    assert _sent(built) == 0


async def test_an_anthropic_tool_use_without_its_result_is_refused_in_anthropic_shape(
    stack: tuple[Gateway, httpx.AsyncClient],
) -> None:
    built, _ = stack
    transport = httpx2.ASGITransport(app=create_app(built))  # the anthropic SDK's own httpx
    http = httpx2.AsyncClient(transport=transport, base_url="http://localhost")
    client = anthropic.AsyncAnthropic(
        base_url="http://localhost", api_key="unused", http_client=http, max_retries=0
    )
    messages: Any = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}],
        },
        {"role": "user", "content": "never mind"},
    ]
    for model in ("demo-responses", "demo-gemini"):
        with pytest.raises(anthropic.BadRequestError) as caught:
            await client.messages.create(model=model, max_tokens=64, messages=messages)
        body: Any = caught.value.body
        assert body["type"] == "error" and "toolu_1" in body["error"]["message"]
    assert _sent(built) == 0


def test_reused_ids_pair_and_the_first_unanswered_call_is_named() -> None:
    def call(call_id: str) -> Message:
        return Message(
            role="assistant", parts=(ToolCallPart(call_id=call_id, name="f", arguments="{}"),)
        )

    def result(call_id: str) -> Message:
        return Message(role="tool", parts=(ToolResultPart(call_id=call_id),))

    user = Message(role="user", parts=(TextPart(text="go"),))
    history = [user, *[call("a"), result("a")] * 6, call("a"), call("b")]
    unpaired = find_unpaired(Request(model="m", messages=tuple(history)))
    assert unpaired is not None and unpaired.location == "messages[13].parts[0]"
    assert find_unpaired(Request(model="m", messages=(user, call("a"), result("a")))) is None
    twice = (user, call("a"), result("a"), result("a"))  # Responses accepts a second output
    assert find_unpaired(Request(model="m", messages=twice)) is None
    orphan = find_unpaired(Request(model="m", messages=(user, result("z"), call("z"))))
    assert orphan is not None and orphan.location == "messages[1].parts[0]"
