"""Switching models through a real ``interlock serve`` with the official ``openai`` SDK as a
Responses client (issue 11, "switching models works").

One conversation with a tool step per provider, Anthropic → Gemini → Responses, the client
sending back every output item it got, as Responses clients do:

* the answers from Anthropic and Gemini carry item ids the gateway minted; the Responses
  upstream (whose emulator answers 404 to any id it did not issue, like the service) must
  never receive them, stored (``store`` left on) or stateless (``store: false``);
* the earlier turns' reasoning (Gemini thought summaries; the signatures stay in the
  gateway's vault) cannot go to OpenAI, but those turns are finished: the request goes,
  with a warning, instead of being refused; only a switch inside an unfinished tool step
  is refused. (The same switch with the ``anthropic`` SDK as client, whose history carries
  Anthropic's signed thinking too: ``test_serve_anthropic.py``.)

Streaming and not, with the same answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS: Any = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
REASONING: Any = {"effort": "medium", "summary": "auto"}
STATELESS: Any = {"store": False, "include": ["reasoning.encrypted_content"]}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("serve-switch")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def create(
    client: OpenAI, model: str, items: list[Any], stream: bool, store: bool
) -> tuple[list[dict[str, Any]], str]:
    """One Responses call: its output items and the gateway's translation header."""
    options: Any = {"tools": TOOLS, "reasoning": REASONING, **({} if store else STATELESS)}
    if not stream:
        raw = client.responses.with_raw_response.create(model=model, input=items, **options)
        output = raw.parse().output
        header = raw.headers.get("x-interlock-translation", "")
    else:
        with client.responses.with_streaming_response.create(
            model=model, input=items, stream=True, **options
        ) as raw:
            header = raw.headers.get("x-interlock-translation", "")
            events = list(raw.parse())
        completed = [event for event in events if event.type == "response.completed"]
        assert len(completed) == 1, [event.type for event in events]
        output = completed[0].response.output
    return [item.model_dump(exclude_none=True) for item in output], header


def tool_turn(
    client: OpenAI, model: str, items: list[Any], city: str, stream: bool, store: bool
) -> tuple[str, list[str]]:
    """The user asks for the weather, the model calls the tool, the answer comes back."""
    items.append({"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'})
    output, first = create(client, model, items, stream, store)
    call = next(item for item in output if item["type"] == "function_call")
    items += [*output, {"type": "function_call_output", "call_id": call["call_id"], "output": city}]
    output, second = create(client, model, items, stream, store)
    items += output
    text = "".join(
        part["text"] for item in output if item["type"] == "message" for part in item["content"]
    )
    return text, [first, second]


@pytest.mark.parametrize("store", [True, False], ids=["stored", "stateless"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_gemini_responses_switch_reaches_the_responses_upstream(
    stack: tuple[str, dict[str, Emulator]], stream: bool, store: bool
) -> None:
    url, emulators = stack
    upstream = emulators["openai-responses"]
    seen = len(upstream.received)
    items: list[Any] = []
    answers: list[str] = []
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        for model, city in (("via-anthropic", "Lima"), ("via-gemini", "Oslo")):
            text, _ = tool_turn(client, model, items, city, stream, store)
            answers.append(text)
        minted = [item["id"] for item in items if "interlock_" in str(item.get("id"))]
        assert minted, "the translated answers carry ids the gateway minted"
        text, headers = tool_turn(client, "via-responses", items, "Rome", stream, store)
        answers.append(text)
    assert answers[:2] == ["Done: get_weather returned Lima", "Done: get_weather returned Oslo"]
    assert answers[2].startswith("Done: ") and answers[2].endswith(" returned Rome")
    sent = upstream.received[seen:]
    assert len(sent) == 2, "both requests of the Responses turn reached the upstream"
    assert not any("interlock_" in json.dumps(body) for body in sent), "no minted id went"
    # The finished turns lost their foreign reasoning, said so, and were not refused.
    assert all(header.startswith("degraded; reasoning_dropped") for header in headers), headers
    # The Responses turn's own reasoning came back exactly (encrypted, its own ids).
    reasoning = [item for item in sent[-1]["input"] if item.get("type") == "reasoning"]
    assert len(reasoning) == 1 and reasoning[0]["id"].startswith("rs_emu")


@pytest.mark.parametrize("store", [False, True], ids=["stateless", "stored"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_switch_inside_an_unfinished_tool_step_is_still_refused(
    stack: tuple[str, dict[str, Emulator]], stream: bool, store: bool
) -> None:
    """Strict refuses what the current step needs whether or not the service stores state."""
    url, emulators = stack
    upstream = emulators["openai-responses"]
    items: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Quito"}'}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        output, _ = create(client, "via-gemini", items, stream, False)
        call = next(item for item in output if item["type"] == "function_call")
        items += [
            *output,
            {"type": "function_call_output", "call_id": call["call_id"], "output": "x"},
        ]
        seen = len(upstream.received)
        with pytest.raises(openai.BadRequestError) as refused:
            create(client, "via-responses", items, stream, store)
    body: Any = refused.value.body
    assert body["code"] == "reasoning_not_replayable"
    assert "current turn" in body["message"]
    assert len(upstream.received) == seen, "nothing was sent"
