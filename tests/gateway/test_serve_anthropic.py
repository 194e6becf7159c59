"""The official ``anthropic`` SDK as a client of a real ``interlock serve``.

One gateway subprocess, routed to the four emulators served in this process (so the test
reads what each upstream received). Plain chat to every upstream, streaming and not; a
tool-use conversation with thinking that switches models Anthropic → Gemini → Responses →
Anthropic, each upstream getting its own opaque payloads back (the emulators reject
anything else) and never another's; a switch in the middle of a tool loop refused explicitly; and the
Anthropic-shaped errors, auth and token counting. (Another provider's reasoning on an
earlier, finished tool step never blocks a request: only the current step needs its own.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

WEATHER = {
    "name": "get_weather",
    "description": "Weather by city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("serve-anthropic")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def ask(client: anthropic.Anthropic, model: str, messages: list[Any], stream: bool) -> Any:
    """One Messages call (thinking on, one tool); the final message either way."""
    options: Any = {"tools": [WEATHER], "thinking": THINKING}
    if not stream:
        return client.messages.create(model=model, max_tokens=2048, messages=messages, **options)
    with client.messages.stream(
        model=model, max_tokens=2048, messages=messages, **options
    ) as events:
        return events.get_final_message()


def tool_turn(
    client: anthropic.Anthropic, model: str, messages: list[Any], city: str, stream: bool
) -> str:
    """User asks for the weather; the model calls the tool; the answer comes back."""
    messages.append({"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'})
    first = ask(client, model, messages, stream)
    assert first.stop_reason == "tool_use", first
    call = next(block for block in first.content if block.type == "tool_use")
    messages.append({"role": "assistant", "content": [b.model_dump() for b in first.content]})
    answer = {"type": "tool_result", "tool_use_id": call.id, "content": f"sunny in {city}"}
    messages.append({"role": "user", "content": [answer]})
    final = ask(client, model, messages, stream)
    messages.append({"role": "assistant", "content": [b.model_dump() for b in final.content]})
    return "".join(block.text for block in final.content if block.type == "text")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", ["via-anthropic", "via-gemini", "via-responses", "via-chat"])
def test_chat_to_every_upstream(
    stack: tuple[str, dict[str, Emulator]], model: str, stream: bool
) -> None:
    url, _ = stack
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        messages: list[Any] = [{"role": "user", "content": "hello"}]
        if stream:
            with client.messages.stream(model=model, max_tokens=64, messages=messages) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(model=model, max_tokens=64, messages=messages)
    assert [b.text for b in message.content if b.type == "text"] == ["You said: hello"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_model_switches_replay_each_providers_own_reasoning(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    messages: list[Any] = []
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        assert "sunny in Paris" in tool_turn(client, "via-anthropic", messages, "Paris", stream)
        signed = next(b for b in messages[1]["content"] if b["type"] == "thinking")
        assert signed["signature"], "Anthropic's thinking arrives signed"
        sent = emulators["anthropic"].received[-1]["messages"][1]["content"][0]
        assert sent == {
            "type": "thinking",
            "thinking": signed["thinking"],
            "signature": signed["signature"],
        }

        assert "sunny in Rome" in tool_turn(client, "via-gemini", messages, "Rome", stream)
        gemini = emulators["gemini"].received[-1]
        calls = [p for c in gemini["contents"] for p in c["parts"] if "functionCall" in p]
        assert calls[-1].get("thoughtSignature"), "Gemini gets its own signature back (vault)"
        assert signed["signature"] not in json.dumps(gemini), "Anthropic's stays with Anthropic"

        # Anthropic's and Gemini's reasoning cannot go to OpenAI, but their turns are
        # finished (only the current tool step needs its own reasoning): the request goes.
        seen = len(emulators["openai-responses"].received)
        assert "sunny in Oslo" in tool_turn(client, "via-responses", messages, "Oslo", stream)
        sent = emulators["openai-responses"].received[seen:]
        assert len(sent) == 2, "both requests of the Responses turn were sent"
        assert signed["signature"] not in json.dumps(sent), "Anthropic's stays with Anthropic"
        assert "thoughtSignature" not in json.dumps(sent)
        reasoning = [item for item in sent[-1]["input"] if item.get("type") == "reasoning"]
        assert len(reasoning) == 1 and reasoning[0]["encrypted_content"], "its own, from the vault"

        messages.append({"role": "user", "content": "hello again"})
        back = ask(client, "via-anthropic", messages, stream)
    assert [b.text for b in back.content if b.type == "text"] == ["You said: hello again"]
    received = json.dumps(emulators["anthropic"].received[-1])
    assert json.dumps(signed["signature"]) in received, "the turn-1 signature, byte for byte"
    assert "thoughtSignature" not in received and "encrypted_content" not in received


def test_a_switch_inside_a_tool_loop_is_refused_explicitly(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        messages: list[Any] = [
            {"role": "user", "content": 'call get_weather with {"city": "Lima"}'}
        ]
        first = ask(client, "via-anthropic", messages, False)
        call = next(block for block in first.content if block.type == "tool_use")
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "x"}],
            },
        ]
        with pytest.raises(anthropic.BadRequestError) as refused:
            ask(client, "via-gemini", messages, False)
    body: Any = refused.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "without loss" in body["error"]["message"]


def test_errors_auth_and_token_counting_speak_anthropic(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    body = {
        "model": "via-anthropic",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    missing = httpx.post(f"{url}/v1/messages", json=body)
    assert missing.status_code == 400
    assert missing.json()["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic-version: header is required",
        "details": {"error_code": "missing_header", "param": "anthropic-version"},
    }
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        with pytest.raises(anthropic.NotFoundError) as unknown:
            client.messages.create(model="nope", max_tokens=10, messages=body["messages"])
        counted = client.messages.count_tokens(model="via-anthropic", messages=body["messages"])
    assert unknown.value.body["error"]["message"] == "model: nope"  # type: ignore[index]
    assert counted.input_tokens > 0
