"""A reused call id never replays another call's signature (through a real ``interlock serve``).

OpenRouter and Novita number tool calls ``0``, ``1``… in every response, so one id names
different calls in different turns and conversations. The vault keys a call's signature by
its id *and* its name and arguments: an OpenAI Chat client (which cannot carry Gemini
signatures) gets each turn's signature restored onto exactly the call it was issued for.
The Gemini emulator answers with positional ids and binds each signature to its call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

from interlock.emulators import DefaultBrain, emulator_app
from interlock.emulators._brain import mint_token
from interlock.emulators.gemini import SIGNATURE_KIND, GeminiEmulator, call_binding
from tests.gateway.serving import app_on_loopback, gateway_config, serve

TOOLS: Any = [
    {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }
    for name in ("get_weather", "get_time")
]
WEATHER = 'call get_weather with {"city": "Paris"}'
TIME = 'call get_time with {"zone": "UTC"}'


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, GeminiEmulator]]:
    directory = tmp_path_factory.mktemp("vault-ids")
    emulator = GeminiEmulator(DefaultBrain(positional_ids=True))
    with app_on_loopback(emulator_app(emulator)) as emulator_url:
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as url:
            yield url, emulator


def _ask(client: OpenAI, messages: list[Any], stream: bool) -> dict[str, Any]:
    """The assistant message (as a Chat history entry) answering ``messages``."""
    if not stream:
        answer = client.chat.completions.create(model="via-gemini", messages=messages, tools=TOOLS)
        return answer.choices[0].message.model_dump(exclude_none=True)
    calls: dict[int, dict[str, Any]] = {}
    text = ""
    chunks = client.chat.completions.create(
        model="via-gemini", messages=messages, tools=TOOLS, stream=True
    )
    for chunk in chunks:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"type": "function", "function": {}})
                function = call.function
                if call.id:
                    entry["id"] = call.id
                if function is not None and function.name:
                    entry["function"]["name"] = function.name
                if function is not None and function.arguments:
                    arguments = entry["function"].get("arguments", "") + function.arguments
                    entry["function"]["arguments"] = arguments
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def _tool_turn(client: OpenAI, history: list[Any], ask: str, stream: bool) -> list[Any]:
    """``history`` plus a user turn asking for a call, the call, and its result."""
    messages = [*history, {"role": "user", "content": ask}]
    step = _ask(client, messages, stream)
    (call,) = step["tool_calls"]
    assert call["id"] == "0"  # the id every turn's first call gets
    return [*messages, step, {"role": "tool", "tool_call_id": "0", "content": "done"}]


def _signed_calls(sent: Any) -> list[tuple[str, bool]]:
    """Each ``functionCall`` sent upstream: its name, and whether it carries the signature
    minted for exactly that call."""
    out: list[tuple[str, bool]] = []
    for content in sent["contents"]:
        for part in content["parts"]:
            call = part.get("functionCall")
            if call is None:
                continue
            expected = mint_token(SIGNATURE_KIND, call_binding(call["name"], call["args"]))
            out.append((call["name"], part.get("thoughtSignature") == expected))
    return out


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_two_turns_with_call_id_0_each_get_their_own_signature_back(
    stack: tuple[str, GeminiEmulator], stream: bool
) -> None:
    url, emulator = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        first = _tool_turn(client, [], WEATHER, stream)
        other = _tool_turn(client, [], TIME, stream)  # another conversation, also id "0"
        done = _ask(client, first, stream)  # the first conversation goes on
        assert "get_weather returned done" in done["content"]
        assert _signed_calls(emulator.received[-1]) == [("get_weather", True)]
        both = _tool_turn(client, [*first, done], TIME, stream)
        final = _ask(client, both, stream)
        assert "get_time returned done" in final["content"]
        assert _signed_calls(emulator.received[-1]) == [
            ("get_weather", True),
            ("get_time", True),
        ]
        assert _ask(client, other, stream)["content"].startswith("Done: get_time")
    assert _signed_calls(emulator.received[-1]) == [("get_time", True)]
