"""A Chat upstream streaming several choices (``n > 1``), through a real ``interlock serve``.

A Chat client gets every choice exactly as the upstream sent it, also when the gateway
decodes the stream on the side (a ``gemini-compat`` upstream whose signatures go to the
vault) or re-encoded the request (a signature the client dropped, put back from the vault).
A client of another dialect gets choice 0 translated, the stream does not break, and a
Responses client is told the other choices were dropped (``candidates_dropped``); a Chat
client asking a Gemini upstream for several gets them all (``n`` is ``candidateCount``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

from interlock.emulators import create_emulator, emulator_app
from tests.gateway.serving import app_on_loopback, serve

CONFIG = """
[server]
access_log = false

[store]
url = "sqlite:///{state}"

[[upstreams]]
name = "signed"
protocol = "openai-chat"
base_url = "{signed}/v1"
reasoning_dialect = "gemini-compat"

[[upstreams]]
name = "scripted"
protocol = "openai-chat"
base_url = "{scripted}/v1"

[[upstreams]]
name = "gemini"
protocol = "gemini"
base_url = "{signed}"

[[models]]
name = "via-gemini"
upstream = "gemini"
model = "gemini-3-flash-emulated"

[[models]]
name = "via-signed"
upstream = "signed"
model = "gemini-3-flash-emulated"

[[models]]
name = "via-scripted"
upstream = "scripted"
model = "chat-emulated"
"""
TWO_CHOICES = [
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "chat-emulated",
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": "zero"}, "finish_reason": None},
            {"index": 1, "delta": {"role": "assistant", "content": "one"}, "finish_reason": None},
        ],
    },
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "chat-emulated",
        "choices": [{"index": 1, "delta": {}, "finish_reason": "stop"}],
    },
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "chat-emulated",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    },
    "[DONE]",
]
TOOLS: Any = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("choices")
    script = directory / "script.json"
    script.write_text(json.dumps([{"stream": TWO_CHOICES}]))
    signed = create_emulator("openai-chat", reasoning_dialect="gemini-compat")
    scripted = create_emulator("openai-chat", script=script)
    with (
        app_on_loopback(emulator_app(signed, create_emulator("gemini"))) as signed_url,
        app_on_loopback(emulator_app(scripted)) as scripted_url,
    ):
        config = directory / "interlock.toml"
        text = CONFIG.format(state=directory / "state.db", signed=signed_url, scripted=scripted_url)
        config.write_text(text)
        with serve(config, directory) as served:
            yield served


def _streamed_choices(client: OpenAI, messages: list[Any]) -> dict[int, str]:
    texts: defaultdict[int, str] = defaultdict(str)
    stream = client.chat.completions.create(
        model="via-signed", messages=messages, tools=TOOLS, n=2, stream=True
    )
    for chunk in stream:
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
    return dict(texts)


def test_a_chat_client_gets_every_streamed_choice(url: str) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        plain = [{"role": "user", "content": "hello"}]
        whole = client.chat.completions.create(model="via-signed", messages=plain, n=2)
        expected = {choice.index: choice.message.content for choice in whole.choices}
        assert _streamed_choices(client, plain) == expected and len(expected) == 2

        ask: list[Any] = [{"role": "user", "content": "call get_weather with {}"}]
        first = client.chat.completions.create(model="via-signed", messages=ask, tools=TOOLS)
        call = first.choices[0].message.tool_calls
        assert call, "the emulated model calls the tool"
        stripped = {  # the signature dropped: the gateway restores it and re-encodes
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call[0].id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        }
        result = {"role": "tool", "tool_call_id": call[0].id, "content": "sunny"}
        texts = _streamed_choices(client, [*ask, stripped, result])
        assert sorted(texts) == [0, 1] and texts[0] and texts[0] == texts[1]


def test_a_chat_client_gets_several_choices_from_a_gemini_upstream(url: str) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        messages: Any = [{"role": "user", "content": "hello"}]
        with client.chat.completions.with_streaming_response.create(
            model="via-gemini", messages=messages, n=2, stream=True
        ) as response:
            label = response.headers["x-interlock-translation"]
            texts: defaultdict[int, str] = defaultdict(str)
            for chunk in response.parse():
                for choice in chunk.choices:
                    texts[choice.index] += choice.delta.content or ""
    assert "openai-chat.n" not in label and "candidate" not in label
    assert sorted(texts) == [0, 1] and texts[0] and texts[0] == texts[1]


def test_another_dialect_gets_choice_zero(url: str) -> None:
    with (
        OpenAI(base_url=f"{url}/v1", api_key="unused") as client,
        client.responses.stream(model="via-scripted", input="hello") as stream,
    ):
        final = stream.get_final_response()
    assert final.output_text == "zero" and final.status == "completed"
    said = (final.model_extra or {})["interlock"]
    assert [w["code"] for w in said["warnings"]] == ["candidates_dropped"]
