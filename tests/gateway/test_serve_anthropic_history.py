"""Long tool conversations to an Anthropic upstream through a real ``interlock serve``: the
history cache and the kept translation of the unchanged prefix are used, and the emulator
(which checks every rule of the Messages API and verifies each thinking signature it
minted, on replay) accepts every request.

The official ``openai`` SDK as a Chat client (the thinking signatures live in the
gateway's vault: the client never sees them) and the official ``anthropic`` SDK (it
sends its thinking blocks back itself), streaming and not. Each turn is a user message
naming the tool, the model's call (signed thinking first), the tool's result, the model's
answer; the request carrying the tool result continues the previous one by an assistant
step and a tool result alone, which is what the gateway reuses its work for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

SYSTEM = "You answer briefly. " + "Weather is reported in degrees Celsius. " * 250
"""Long enough (≈ 10 KB) that every Chat history is above the history cache's 8 KB floor."""
CONTEXT = "The trip: " + "a day in each city, weather permitting. " * 230
"""The same for an Anthropic client, whose ``system`` is not part of its history: the first
user turn carries it."""
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyiv", "Quito"]
WEATHER = {
    "name": "get_weather",
    "description": "Weather by city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
CHAT_WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather by city",
        "parameters": WEATHER["input_schema"],
    },
}


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("serve-anthropic-history")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def reused(url: str) -> dict[str, int]:
    """The gateway's history cache counters, by the work saved."""
    text = httpx.get(f"{url}/metrics").text
    found = re.findall(r'interlock_history_reused_total\{work="(\w+)"\} (\d+)', text)
    return {work: int(count) for work, count in found}


def _thinking_checked(sent: list[Any], first: int) -> int:
    """How many signed thinking blocks the emulator was sent back since request ``first``
    (each one verified there: a forged or altered signature is a 400)."""
    count = 0
    for body in sent[first:]:
        for message in body["messages"]:
            content = message["content"]
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "thinking":
                    assert block["signature"], "replayed with its signature"
                    count += 1
    return count


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_chat_client_conversation_is_spliced_and_its_thinking_replayed(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    upstream = emulators["anthropic"]
    first = len(upstream.received)
    before = reused(url).get("translation", 0)
    messages: list[Any] = [{"role": "system", "content": SYSTEM}]
    options: Any = {
        "model": "via-anthropic",
        "tools": [CHAT_WEATHER],
        "extra_body": {"reasoning": {"max_tokens": 2048}},  # a thinking budget
    }

    def ask(client: openai.OpenAI) -> Any:
        if not stream:
            return client.chat.completions.create(messages=messages, **options).choices[0].message
        with client.chat.completions.stream(messages=messages, **options) as events:
            return events.get_final_completion().choices[0].message

    with openai.OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        for city in CITIES:
            messages.append(
                {"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'}
            )
            step = ask(client)
            assert step.tool_calls, step
            call = step.tool_calls[0]
            messages.append(
                {
                    "role": "assistant",
                    "content": step.content,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.function.name,
                                "arguments": call.function.arguments,
                            },
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"sun, {city}"})
            answer = ask(client)
            assert answer.content and f"sun, {city}" in answer.content
            messages.append({"role": "assistant", "content": answer.content})
    sent = upstream.received[first:]
    assert len(sent) == 2 * len(CITIES)
    assert all(body["thinking"]["type"] == "enabled" for body in sent)
    # Every request carrying a tool result replays that step's signed thinking (from the
    # vault), and the earlier steps' too: 1 + 2 + ... + 6 thinking blocks in those.
    assert _thinking_checked(sent, 0) >= len(CITIES) * (len(CITIES) + 1) // 2
    # The first tool result continues a history not yet held; every later one is spliced.
    assert reused(url)["translation"] - before >= len(CITIES) - 2


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_an_anthropic_client_conversation_replays_its_own_thinking(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    upstream = emulators["anthropic"]
    first = len(upstream.received)
    before = reused(url)
    messages: list[Any] = []
    options: Any = {
        "model": "via-anthropic",
        "max_tokens": 4096,
        "system": SYSTEM,
        "tools": [WEATHER],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }

    def ask(client: anthropic.Anthropic) -> Any:
        if not stream:
            return client.messages.create(messages=messages, **options)
        with client.messages.stream(messages=messages, **options) as events:
            return events.get_final_message()

    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        for city in CITIES:
            context = "" if messages else CONTEXT
            ask_for = f'call get_weather with {{"city": "{city}"}}'
            messages.append({"role": "user", "content": context + ask_for})
            step = ask(client)
            assert step.stop_reason == "tool_use", step
            assert step.content[0].type == "thinking" and step.content[0].signature
            call = next(block for block in step.content if block.type == "tool_use")
            messages.append(
                {"role": "assistant", "content": [b.model_dump() for b in step.content]}
            )
            result = {"type": "tool_result", "tool_use_id": call.id, "content": f"sun, {city}"}
            messages.append({"role": "user", "content": [result]})
            answer = ask(client)
            texts = [block.text for block in answer.content if block.type == "text"]
            assert any(f"sun, {city}" in text for text in texts), answer
            messages.append(
                {"role": "assistant", "content": [b.model_dump() for b in answer.content]}
            )
    sent = upstream.received[first:]
    assert len(sent) == 2 * len(CITIES)
    # The client's own bodies, passed through: its signatures byte for byte.
    last = json.dumps(sent[-1]["messages"])
    signatures = [
        block["signature"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "thinking"
    ]
    assert signatures and all(json.dumps(signature) in last for signature in signatures)
    assert _thinking_checked(sent, 0) >= len(CITIES) * (len(CITIES) + 1) // 2
    # Every request after the first two has only its new messages decoded; those carrying
    # a tool result (an assistant step and its result, no user turn) only those checked.
    after = reused(url)
    assert after["decode"] - before.get("decode", 0) >= 2 * len(CITIES) - 2
    assert after["check"] - before.get("check", 0) >= len(CITIES) - 2
