"""Switching between two vendors' Anthropic-compatible services through a real ``interlock
serve``, with the official ``anthropic`` SDK as a Messages client and the ``openai`` SDK as a
Chat client (issue 11: a thinking signature goes back only to the vendor that signed it).

Two Anthropic emulators stand for Anthropic and DeepSeek's ``/anthropic`` endpoint
(``issuer``): each signs its own thinking and, like the services, refuses a signature the
other issued (400 ``Invalid `signature` in `thinking` block``). The gateway names their
vendors (``vendor``). One conversation goes DeepSeek → Anthropic → DeepSeek, thinking on,
streamed and not, the client sending back every content block it got:

* a vendor's signature never reaches the other vendor's upstream; the finished turn's
  thinking is dropped with a warning, never refused;
* a vendor's own signature comes back to it byte-exact, on the turn that needs it and on
  its earlier turns;
* a switch inside an unfinished tool step is refused under strict, nothing sent.

The gateway knows which vendor signed a block from its record of the answers it handed out
(``gateway/provenance.py``); a signature it never saw goes where the client sends it, and
the service judges it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from interlock.emulators.anthropic import thinking_token
from tests.gateway.serving import serve_two_vendors

WEATHER: Any = {
    "name": "get_weather",
    "description": "Weather by city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}


def config(anthropic_url: str, deepseek_url: str, store: str) -> str:
    return f"""
[server]
access_log = false

[store]
url = "{store}"

[[upstreams]]
name = "up-anthropic"
protocol = "anthropic"
base_url = "{anthropic_url}/v1"
vendor = "anthropic"

[[upstreams]]
name = "up-deepseek"
protocol = "anthropic"
base_url = "{deepseek_url}/v1"
vendor = "deepseek"

[[models]]
name = "claude"
upstream = "up-anthropic"
model = "claude-emulated"

[[models]]
name = "deepseek"
upstream = "up-deepseek"
model = "deepseek-emulated"
"""


Stack = tuple[str, dict[str, Emulator]]
"""The gateway's URL and the emulators by vendor."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("serve-anthropic-vendors")
    with serve_two_vendors(directory, "anthropic", ("anthropic", "deepseek"), config) as stack:
        yield stack[:2]


def ask(
    client: anthropic.Anthropic, model: str, messages: list[Any], stream: bool
) -> tuple[Any, str]:
    """One Messages call (thinking on, one tool): the final message and the translation
    header, either way."""
    options: Any = {"tools": [WEATHER], "thinking": THINKING, "max_tokens": 2048}
    if not stream:
        raw = client.messages.with_raw_response.create(model=model, messages=messages, **options)
        return raw.parse(), raw.headers["x-interlock-translation"]
    with client.messages.stream(model=model, messages=messages, **options) as events:
        header = events.response.headers["x-interlock-translation"]
        return events.get_final_message(), header


def tool_turn(
    client: anthropic.Anthropic, model: str, messages: list[Any], city: str, stream: bool
) -> tuple[str, list[str]]:
    """The user asks for the weather, the model calls the tool, the answer comes back."""
    messages.append({"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'})
    first, header = ask(client, model, messages, stream)
    assert first.stop_reason == "tool_use", first
    call = next(block for block in first.content if block.type == "tool_use")
    messages.append({"role": "assistant", "content": [b.model_dump() for b in first.content]})
    result = {"type": "tool_result", "tool_use_id": call.id, "content": f"sunny in {city}"}
    messages.append({"role": "user", "content": [result]})
    final, second = ask(client, model, messages, stream)
    messages.append({"role": "assistant", "content": [b.model_dump() for b in final.content]})
    return "".join(b.text for b in final.content if b.type == "text"), [header, second]


def signatures(messages: list[Any]) -> list[str]:
    """The signatures (and redacted data) of the thinking blocks in ``messages``."""
    found: list[str] = []
    for message in messages:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "thinking" and block.get("signature"):
                found.append(block["signature"])
    return found


def sent(emulator: Emulator, since: int) -> list[str]:
    bodies: list[Any] = emulator.received[since:]
    return [signature for body in bodies for signature in signatures(body["messages"])]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_signed_thinking_goes_back_only_to_the_vendor_that_signed_it(
    stack: Stack, stream: bool
) -> None:
    url, emulators = stack
    seen = {vendor: len(emulator.received) for vendor, emulator in emulators.items()}
    messages: list[Any] = []
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        lima, deepseek_first = tool_turn(client, "deepseek", messages, "Lima", stream)
        from_deepseek = signatures(messages)
        oslo, to_anthropic = tool_turn(client, "claude", messages, "Oslo", stream)
        from_anthropic = [s for s in signatures(messages) if s not in from_deepseek]
        seen_back = len(emulators["deepseek"].received)
        rome, back_to_deepseek = tool_turn(client, "deepseek", messages, "Rome", stream)
    for text, city in ((lima, "Lima"), (oslo, "Oslo"), (rome, "Rome")):
        assert f"sunny in {city}" in text, text
    assert len(from_deepseek) == 2 and len(from_anthropic) == 2, "each answer came signed"
    # DeepSeek's step went back to DeepSeek exactly, with header exact (relayed as sent).
    assert deepseek_first == ["exact", "exact"]
    assert sent(emulators["deepseek"], seen["deepseek"])[:1] == from_deepseek[:1]
    # Nothing of DeepSeek's reached Anthropic (whose emulator would have refused it).
    anthropic_bodies = json.dumps(emulators["anthropic"].received[seen["anthropic"] :])
    assert not any(signature in anthropic_bodies for signature in from_deepseek)
    assert all(h.startswith("degraded; ") and "reasoning_dropped" in h for h in to_anthropic)
    # Anthropic's own signature of the step it continued went back to it exactly.
    assert sent(emulators["anthropic"], seen["anthropic"]) == from_anthropic[:1]
    # Back on DeepSeek: its earlier signatures went back byte-exact, Anthropic's never did.
    to_deepseek = sent(emulators["deepseek"], seen_back)
    assert set(from_deepseek) <= set(to_deepseek)
    back_bodies = json.dumps(emulators["deepseek"].received[seen_back:])
    assert not any(signature in back_bodies for signature in from_anthropic)
    assert all("reasoning_dropped" in h for h in back_to_deepseek), back_to_deepseek


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_switch_of_vendor_inside_an_unfinished_tool_step_is_refused(
    stack: Stack, stream: bool
) -> None:
    """The model continuing a tool call needs the thinking of its step, which only the
    vendor that signed it accepts: strict refuses in Anthropic's error shape, nothing is
    sent."""
    url, emulators = stack
    messages: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Quito"}'}]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        first, _ = ask(client, "deepseek", messages, stream)
        call = next(block for block in first.content if block.type == "tool_use")
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id}]},
        ]
        seen = len(emulators["anthropic"].received)
        with pytest.raises(anthropic.BadRequestError) as refused:
            ask(client, "claude", messages, stream)
    body: Any = refused.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["details"]["error_code"] == "reasoning_not_replayable"
    message = body["error"]["message"]
    assert "deepseek" in message and "current turn" in message
    assert len(emulators["anthropic"].received) == seen, "nothing was sent"


def test_a_signature_the_gateway_never_saw_goes_as_sent_and_its_service_judges_it(
    stack: Stack,
) -> None:
    """Unknown provenance (history from before the gateway recorded, or from another
    gateway): the block goes to the target as the client sent it. Its own vendor accepts
    it; another's refuses it with its own 400, which the client gets."""
    url, emulators = stack
    text = "Pondering the weather."  # thinking this gateway never handed out
    signature = thinking_token("deepseek-emulated", text, "deepseek")
    thinking = {"type": "thinking", "thinking": text, "signature": signature}
    messages: list[Any] = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "hi"}]},
        {"role": "user", "content": "and again"},
    ]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        seen = len(emulators["anthropic"].received)
        with pytest.raises(anthropic.BadRequestError) as refused:
            ask(client, "claude", messages, False)
        assert len(emulators["anthropic"].received) == seen + 1, "it went, as the client sent it"
        again, header = ask(client, "deepseek", messages, False)
    body: Any = refused.value.body
    assert "Invalid `signature` in `thinking` block" in body["error"]["message"]
    assert header == "exact" and any(block.type == "text" for block in again.content)


def chat_turn(
    client: OpenAI, model: str, messages: list[Any], city: str, stream: bool
) -> tuple[str, list[str]]:
    """A Chat client's tool turn (thinking on through ``reasoning.max_tokens``): its
    history carries the reasoning text it got; the signatures stay in the gateway."""
    tools: Any = [
        {"type": "function", "function": {**WEATHER, "parameters": WEATHER["input_schema"]}}
    ]
    del tools[0]["function"]["input_schema"]
    options: Any = {"tools": tools, "extra_body": {"reasoning": {"max_tokens": 1024}}}
    messages.append({"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'})
    headers: list[str] = []
    for _ in range(2):
        message, header = chat_call(client, model, messages, stream, options)
        headers.append(header)
        messages.append(message)
        calls = message.get("tool_calls")
        if not calls:
            return str(message.get("content")), headers
        messages.append(
            {"role": "tool", "tool_call_id": calls[0]["id"], "content": f"sunny in {city}"}
        )
    raise AssertionError(f"the tool loop did not end: {messages}")


def chat_call(
    client: OpenAI, model: str, messages: list[Any], stream: bool, options: Any
) -> tuple[dict[str, Any], str]:
    """One Chat call: the assistant message as a client sends it back, and the header."""
    if not stream:
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, max_tokens=2048, **options
        )
        message = raw.parse().choices[0].message
        return message.model_dump(exclude_none=True), raw.headers["x-interlock-translation"]
    with client.chat.completions.with_streaming_response.create(
        model=model, messages=messages, max_tokens=2048, stream=True, **options
    ) as raw:
        header = raw.headers["x-interlock-translation"]
        chunks = list(raw.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(
                delta.index, {"type": "function", "function": {"arguments": ""}}
            )
            if delta.id:
                entry["id"] = delta.id
            if delta.function and delta.function.name:
                entry["function"]["name"] = delta.function.name
            if delta.function and delta.function.arguments:
                entry["function"]["arguments"] += delta.function.arguments
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message, header


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_chat_client_switches_between_the_two_vendors(stack: Stack, stream: bool) -> None:
    """A Chat client's history carries the Anthropic-dialect reasoning as text; each
    vendor's signatures are kept for it alone (the vault, per upstream and vendor) and
    restored only for it: each upstream gets its own signed step back, never the other's."""
    url, emulators = stack
    seen = {vendor: len(emulator.received) for vendor, emulator in emulators.items()}
    messages: list[Any] = []
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        lima, first = chat_turn(client, "deepseek", messages, "Lima", stream)
        oslo, second = chat_turn(client, "claude", messages, "Oslo", stream)
        middle = len(emulators["deepseek"].received)
        rome, third = chat_turn(client, "deepseek", messages, "Rome", stream)
    for text, city in ((lima, "Lima"), (oslo, "Oslo"), (rome, "Rome")):
        assert f"sunny in {city}" in text, text
    assert any("reasoning_content" in m for m in messages), "the client got the reasoning text"
    to_deepseek = sent(emulators["deepseek"], seen["deepseek"])
    to_anthropic = sent(emulators["anthropic"], seen["anthropic"])
    assert to_deepseek and to_anthropic, "each continued its own step with its signature"
    assert not set(to_deepseek) & set(to_anthropic)
    # Back on DeepSeek: its Lima step is restored from the vault, Anthropic's Oslo step not.
    back = sent(emulators["deepseek"], middle)
    assert set(to_deepseek[:1]) <= set(back)
    assert "reasoning_dropped" in third[0], third
    assert all(header for header in first + second)
