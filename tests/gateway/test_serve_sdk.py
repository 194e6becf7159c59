"""The official SDKs as clients of a real ``interlock serve``, every ingress × upstream pair.

One gateway subprocess for the session, routed to three emulators served in this process
(so the test can read what each upstream received). For every pair, streaming and not:
plain chat, and a full tool round trip whose second request must carry the upstream's
opaque reasoning back — Gemini thought signatures, OpenAI encrypted reasoning — whether
the client dialect could carry it (passthrough) or not (the gateway's vault).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

UPSTREAMS = {
    "via-responses": "openai-responses",
    "via-chat": "openai-chat",
    "via-gemini": "gemini",
    "via-anthropic": "anthropic",
}
INGRESSES = ["chat", "responses", "gemini"]
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
ASK_TOOL = 'call get_weather with {"city": "Paris"}'


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("serve")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


# ---------------------------------------------------------------- clients, one per dialect


def _chat(url: str, model: str, stream: bool, tool_round_trip: bool) -> str:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:  # closes its connections
        return _chat_turns(client, model, stream, tool_round_trip)


def _chat_turns(client: OpenAI, model: str, stream: bool, tool_round_trip: bool) -> str:
    tools: Any = [
        {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}}
    ]
    messages: list[Any] = [{"role": "user", "content": ASK_TOOL if tool_round_trip else "hello"}]
    first = _chat_call(client, model, messages, tools, stream)
    if not tool_round_trip:
        return first["content"] or ""
    assert first["tool_calls"][0]["function"]["name"] == "get_weather"
    call_id = first["tool_calls"][0]["id"]
    messages += [first, {"role": "tool", "tool_call_id": call_id, "content": "sunny"}]
    return _chat_call(client, model, messages, tools, stream)["content"] or ""


def _chat_call(
    client: OpenAI, model: str, messages: list[Any], tools: Any, stream: bool
) -> dict[str, Any]:
    if not stream:
        message = (
            client.chat.completions.create(model=model, messages=messages, tools=tools)
            .choices[0]
            .message
        )
        return message.model_dump(
            exclude_none=True, exclude={"annotations", "audio", "function_call", "refusal"}
        )
    content: list[str] = []
    reasoning: list[str] = []  # DeepSeek-style upstreams want it back on tool-call turns
    calls: dict[int, dict[str, Any]] = {}
    for chunk in client.chat.completions.create(
        model=model, messages=messages, tools=tools, stream=True
    ):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        reasoning.append(str((delta.model_extra or {}).get("reasoning_content") or ""))
        for call in delta.tool_calls or []:
            entry = calls.setdefault(
                call.index,
                {"id": call.id, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if call.function and call.function.name:
                entry["function"]["name"] = call.function.name
            if call.function and call.function.arguments:
                entry["function"]["arguments"] += call.function.arguments
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
        message["reasoning_content"] = "".join(reasoning)
    return message


def _responses(url: str, model: str, stream: bool, tool_round_trip: bool) -> str:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        return _responses_turns(client, model, stream, tool_round_trip)


def _responses_turns(client: OpenAI, model: str, stream: bool, tool_round_trip: bool) -> str:
    tools: Any = [{"type": "function", "name": "get_weather", "parameters": WEATHER_SCHEMA}]
    items: list[Any] = [{"role": "user", "content": ASK_TOOL if tool_round_trip else "hello"}]
    output = _responses_call(client, model, items, tools, stream)
    if not tool_round_trip:
        return "".join(
            part["text"] for item in output if item["type"] == "message" for part in item["content"]
        )
    call = next(item for item in output if item["type"] == "function_call")
    assert call["name"] == "get_weather"
    items += [
        *output,
        {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"},
    ]
    final = _responses_call(client, model, items, tools, stream)
    return "".join(
        part["text"] for item in final if item["type"] == "message" for part in item["content"]
    )


def _responses_call(
    client: OpenAI, model: str, items: list[Any], tools: Any, stream: bool
) -> list[dict[str, Any]]:
    options: Any = {"store": False, "include": ["reasoning.encrypted_content"], "tools": tools}
    if not stream:
        response = client.responses.create(model=model, input=items, **options)
        return [item.model_dump(exclude_none=True) for item in response.output]
    completed = None
    for event in client.responses.create(model=model, input=items, stream=True, **options):
        if event.type == "response.completed":
            completed = event.response
    assert completed is not None
    return [item.model_dump(exclude_none=True) for item in completed.output]


def _gemini(url: str, model: str, stream: bool, tool_round_trip: bool) -> str:
    options = types.HttpOptions(base_url=url)
    with genai.Client(api_key="unused", http_options=options) as client:
        return _gemini_turns(client, model, stream, tool_round_trip)


def _gemini_turns(client: genai.Client, model: str, stream: bool, tool_round_trip: bool) -> str:
    declaration = types.FunctionDeclaration(
        name="get_weather", parameters_json_schema=WEATHER_SCHEMA
    )
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declaration])])
    contents: list[types.Content] = [
        types.Content(
            role="user", parts=[types.Part(text=ASK_TOOL if tool_round_trip else "hello")]
        )
    ]
    first = _gemini_call(client, model, contents, config, stream)
    if not tool_round_trip:
        return "".join(part.text or "" for part in first.parts or [] if not part.thought)
    call = next(part.function_call for part in first.parts or [] if part.function_call)
    assert call.name == "get_weather"
    answer = types.Part(
        function_response=types.FunctionResponse(
            id=call.id, name=call.name, response={"output": "sunny"}
        )
    )
    contents += [first, types.Content(role="user", parts=[answer])]
    final = _gemini_call(client, model, contents, config, stream)
    return "".join(part.text or "" for part in final.parts or [] if not part.thought)


def _gemini_call(
    client: genai.Client,
    model: str,
    contents: list[types.Content],
    config: types.GenerateContentConfig,
    stream: bool,
) -> types.Content:
    if not stream:
        response = client.models.generate_content(model=model, contents=contents, config=config)
        assert response.candidates and response.candidates[0].content
        return response.candidates[0].content
    parts: list[types.Part] = []
    for chunk in client.models.generate_content_stream(
        model=model, contents=contents, config=config
    ):
        if chunk.candidates and chunk.candidates[0].content:
            parts.extend(chunk.candidates[0].content.parts or [])
    return types.Content(role="model", parts=parts)


CLIENTS = {"chat": _chat, "responses": _responses, "gemini": _gemini}


# ---------------------------------------------------------------- what the upstream saw


def _last_received(emulators: dict[str, Emulator], model: str) -> dict[str, Any]:
    return emulators[UPSTREAMS[model]].received[-1]


def assert_opaque_replayed(emulators: dict[str, Emulator], model: str) -> None:
    """The second request of the round trip carried the upstream's own opaque reasoning."""
    received = _last_received(emulators, model)
    protocol = UPSTREAMS[model]
    if protocol == "gemini":
        calls = [
            part
            for content in received["contents"]
            for part in content["parts"]
            if "functionCall" in part
        ]
        assert calls and calls[0].get("thoughtSignature"), json.dumps(received)[:2000]
    elif protocol == "openai-responses":
        reasoning = [item for item in received["input"] if item.get("type") == "reasoning"]
        assert reasoning and reasoning[0].get("encrypted_content"), json.dumps(received)[:2000]
    elif protocol == "anthropic":
        # These clients ask for no thinking, so the emulator sends none: the call itself must
        # come back as the assistant's tool_use, answered by a tool_result.
        blocks = [
            block
            for message in received["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
        ]
        kinds = [block["type"] for block in blocks]
        assert "tool_use" in kinds and "tool_result" in kinds, json.dumps(received)[:2000]
    else:
        assert any(message.get("tool_calls") for message in received["messages"])


# ---------------------------------------------------------------- the matrix


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", list(UPSTREAMS))
@pytest.mark.parametrize("ingress", INGRESSES)
def test_chat(
    stack: tuple[str, dict[str, Emulator]], ingress: str, model: str, stream: bool
) -> None:
    url, emulators = stack
    text = CLIENTS[ingress](url, model, stream, False)
    assert text == "You said: hello"
    assert _last_received(emulators, model)  # the upstream really answered


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", list(UPSTREAMS))
@pytest.mark.parametrize("ingress", INGRESSES)
def test_tool_round_trip_replays_opaque_reasoning(
    stack: tuple[str, dict[str, Emulator]], ingress: str, model: str, stream: bool
) -> None:
    url, emulators = stack
    text = CLIENTS[ingress](url, model, stream, True)
    assert text.startswith("Done:") and "sunny" in text
    assert_opaque_replayed(emulators, model)
