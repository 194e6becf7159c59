"""The Chat emulator on a real loopback server, driven by the official ``openai`` SDK."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import (
    REASONING_DIALECTS,
    ReasoningDialect,
    StreamDecoder,
    encode_request,
)
from interlock.emulators._brain import ScriptBrain
from interlock.emulators.openai_chat import (
    OpenAIChatEmulator,
    create_app,
)
from interlock.transcript import (
    Message,
    Request,
    TextPart,
    ToolResultPart,
    fold_updates,
)

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather by city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ASK = {"role": "user", "content": 'Please call get_weather with {"city":"Paris"}'}


@dataclass
class _Holder:
    """An ASGI app that delegates to whichever emulator app a test installed."""

    app: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            del message
            return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[_Holder, str]]:
    holder = _Holder()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(holder, log_level="warning", lifespan="on")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not instance.started:
        time.sleep(0.01)
    yield holder, f"http://127.0.0.1:{port}/v1"
    instance.should_exit = True
    thread.join(timeout=5)
    sock.close()


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="any", max_retries=0)


def _install(
    server: tuple[_Holder, str], dialect: ReasoningDialect, brain: ScriptBrain | None = None
) -> tuple[OpenAIChatEmulator, openai.OpenAI]:
    holder, base_url = server
    emulator = OpenAIChatEmulator(brain, reasoning_dialect=dialect)
    holder.app = create_app(emulator)
    return emulator, _client(base_url)


CARRIER_CHECKS: dict[str, str] = {
    "reasoning_content": "reasoning_content",
    "reasoning": "reasoning",
    "openrouter": "reasoning_details",
}


@pytest.mark.parametrize("dialect", REASONING_DIALECTS)
def test_sdk_tool_round_trip_non_streaming(
    server: tuple[_Holder, str], dialect: ReasoningDialect
) -> None:
    emulator, client = _install(server, dialect)
    first = client.chat.completions.create(model="emu", messages=[ASK], tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]  # type: ignore[index]  # asserted by the finish reason
    assert call.function.name == "get_weather"  # type: ignore[union-attr]  # a function call
    assert first.usage is not None and first.usage.completion_tokens_details is not None
    assert first.usage.completion_tokens_details.reasoning_tokens == 4
    extras = choice.message.model_extra or {}
    if dialect in CARRIER_CHECKS:
        assert CARRIER_CHECKS[dialect] in extras
    if dialect == "gemini-compat":
        assert "extra_content" in (call.model_extra or {})
    if dialect == "none":
        assert not {"reasoning_content", "reasoning", "reasoning_details"} & extras.keys()
    assistant = choice.message.model_dump(exclude_none=True)
    tool = {"role": "tool", "tool_call_id": call.id, "content": "15 C"}
    second = client.chat.completions.create(
        model="emu", messages=[ASK, assistant, tool], tools=TOOLS
    )
    assert second.choices[0].message.content == "Done: get_weather returned 15 C"
    assert second.choices[0].finish_reason == "stop"
    assert len(emulator.received) == 2


def _stream_response(client: openai.OpenAI, messages: list[Any], dialect: ReasoningDialect):
    stream = client.chat.completions.create(
        model="emu",
        messages=messages,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    decoder = StreamDecoder()
    updates = []
    chunks = list(stream)
    for chunk in chunks:
        data = chunk.model_dump_json(exclude_unset=True)
        updates.extend(decoder.feed(SseEvent(data=data)))
    updates.extend(decoder.feed(SseEvent(data="[DONE]")))
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    return fold_updates(updates)


@pytest.mark.parametrize("dialect", REASONING_DIALECTS)
def test_sdk_tool_round_trip_streaming(
    server: tuple[_Holder, str], dialect: ReasoningDialect
) -> None:
    emulator, client = _install(server, dialect)
    response = _stream_response(client, [ASK], dialect)
    assert response.finish_reason == "tool_calls"
    call = response.message.tool_calls[0]
    assert (call.name, call.parsed_arguments) == ("get_weather", {"city": "Paris"})
    if dialect == "gemini-compat":
        assert call.signature is not None
    user = Message(role="user", parts=(TextPart(text=str(ASK["content"])),))
    result = Message(
        role="tool", parts=(ToolResultPart(call_id=call.call_id, output=(TextPart(text="15 C"),)),)
    )
    history = Request(model="emu", messages=(user, response.message, result))
    encoded = encode_request(history, reasoning_dialect=dialect)
    final = _stream_response(client, encoded.payload["messages"], dialect)  # type: ignore[arg-type]  # wire messages
    assert final.message.text == "Done: get_weather returned 15 C"
    assert len(emulator.received) == 2


def _post(base_url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base_url}/chat/completions", json=body, timeout=5)


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    return response.json()["error"]


def test_orphan_tool_message_is_refused_with_openai_string(server: tuple[_Holder, str]) -> None:
    _install(server, "none")
    body = {
        "model": "emu",
        "messages": [ASK, {"role": "tool", "tool_call_id": "call_x", "content": "1"}],
    }
    error = _error(_post(server[1], body))
    assert error["message"] == (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )
    assert error["param"] == "messages.[1].role"
    assert error["type"] == "invalid_request_error"


def test_missing_tool_results_are_refused_through_the_sdk(server: tuple[_Holder, str]) -> None:
    _, client = _install(server, "none")
    assistant: Any = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        ],
    }
    tool: Any = {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="emu", messages=[ASK, assistant, tool, ASK])
    body: Any = caught.value.body
    assert body["message"].endswith("did not have response messages: call_2")
    assert body["param"] == "messages.[1].role"


def _tool_turn(assistant: dict[str, Any]) -> dict[str, Any]:
    call_id = assistant["tool_calls"][0]["id"]
    tool = {"role": "tool", "tool_call_id": call_id, "content": "15 C"}
    return {"model": "emu", "messages": [ASK, assistant, tool], "tools": TOOLS}


def _first_answer(base_url: str) -> dict[str, Any]:
    response = _post(base_url, {"model": "emu", "messages": [ASK], "tools": TOOLS})
    assert response.status_code == 200
    return response.json()["choices"][0]["message"]


def test_deepseek_requires_reasoning_content_on_tool_call_messages(
    server: tuple[_Holder, str],
) -> None:
    _install(server, "reasoning_content")
    assistant = _first_answer(server[1])
    assert isinstance(assistant["reasoning_content"], str)
    assert _post(server[1], _tool_turn(assistant)).status_code == 200
    del assistant["reasoning_content"]
    error = _error(_post(server[1], _tool_turn(assistant)))
    assert error["message"].startswith(
        "Missing `reasoning_content` field in the assistant message at message index 1."
    )


def test_gemini_compat_requires_the_issued_signature(server: tuple[_Holder, str]) -> None:
    _install(server, "gemini-compat")
    assistant = _first_answer(server[1])
    assert _post(server[1], _tool_turn(assistant)).status_code == 200
    forged = json.loads(json.dumps(assistant))
    forged["tool_calls"][0]["extra_content"]["google"]["thought_signature"] = "Zm9yZ2Vk"
    assert _error(_post(server[1], _tool_turn(forged)))["message"] == "Corrupted thought signature."
    del assistant["tool_calls"][0]["extra_content"]
    error = _error(_post(server[1], _tool_turn(assistant)))
    assert error["message"].startswith(
        "Function call is missing a thought_signature in functionCall parts."
    )
    assert "`default_api:get_weather`" in error["message"]


def test_gemini_compat_accepts_the_documented_dummy(server: tuple[_Holder, str]) -> None:
    _install(server, "gemini-compat")
    assistant = _first_answer(server[1])
    google = assistant["tool_calls"][0]["extra_content"]["google"]
    google["thought_signature"] = "skip_thought_signature_validator"
    assert _post(server[1], _tool_turn(assistant)).status_code == 200


def test_openrouter_refuses_dropped_or_altered_details(server: tuple[_Holder, str]) -> None:
    _install(server, "openrouter")
    assistant = _first_answer(server[1])
    kinds = [detail["type"] for detail in assistant["reasoning_details"]]
    assert kinds == ["reasoning.summary", "reasoning.encrypted"]
    assert _post(server[1], _tool_turn(assistant)).status_code == 200
    altered = json.loads(json.dumps(assistant))
    altered["reasoning_details"][0]["summary"] = "I rewrote this."
    assert (
        _error(_post(server[1], _tool_turn(altered)))["message"] == "Corrupted thought signature."
    )
    dropped = {k: v for k, v in assistant.items() if k != "reasoning_details"}
    assert "missing a thought_signature" in _error(_post(server[1], _tool_turn(dropped)))["message"]


def test_request_shape_errors_use_openai_strings(server: tuple[_Holder, str]) -> None:
    _install(server, "none")
    assert _error(_post(server[1], {"messages": [ASK]}))["message"] == (
        "you must provide a model parameter"
    )
    missing = _error(_post(server[1], {"model": "emu"}))
    assert (missing["param"], missing["code"]) == ("messages", "missing_required_parameter")
    broken = httpx.post(f"{server[1]}/chat/completions", content=b"{not json", timeout=5)
    assert broken.status_code == 400 and "could not parse the JSON body" in broken.text
    malformed = {"model": "emu", "messages": [{"role": "user", "content": 5}]}
    assert _error(_post(server[1], malformed))["param"] == "messages[0].content"


def test_script_entries_are_replayed_in_both_forms(server: tuple[_Holder, str]) -> None:
    wire = {
        "id": "chatcmpl-script",
        "object": "chat.completion",
        "created": 1,
        "model": "emu",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "scripted"},
                "finish_reason": "stop",
            }
        ],
    }
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "emu",
        "choices": [{"index": 0, "delta": {"content": "streamed"}, "finish_reason": "stop"}],
    }
    brain = ScriptBrain(
        entries=[
            {"response": wire},
            {"response": wire},
            {"stream": [chunk, "[DONE]"]},
            {"stream": [chunk, "[DONE]"]},
            {"error": {"status": 429, "body": {"error": {"message": "slow down"}}}},
        ]
    )
    _, client = _install(server, "none", brain)
    plain = client.chat.completions.create(model="emu", messages=[ASK])
    assert plain.model_dump(exclude_unset=True) == wire
    streamed = list(client.chat.completions.create(model="emu", messages=[ASK], stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == "scripted"
    from_stream = client.chat.completions.create(model="emu", messages=[ASK])
    assert from_stream.choices[0].message.content == "streamed"
    raw = list(client.chat.completions.create(model="emu", messages=[ASK], stream=True))
    assert raw[0].choices[0].delta.content == "streamed"
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="emu", messages=[ASK])
    fallback = client.chat.completions.create(model="emu", messages=[ASK])
    assert fallback.choices[0].message.content == f"You said: {ASK['content']}"
