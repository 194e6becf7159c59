"""An answer's warnings are bounded however long the history (issue 13): each code's first
eight in full, then one summary of that code with how many more there were; the header stays
within its limit; ``/metrics`` counts every warning.

Through a real ``interlock serve`` on loopback HTTP to the Responses emulator: the client's
history is one turn of :data:`STEPS` tool steps the client made up (the vault holds no
reasoning for any of them), so each step is a ``vault_miss``, the warning an agent's
history repeats on every turn. The official ``openai`` (Chat Completions) and ``anthropic``
SDKs read the ``interlock`` member, answers whole and streamed; ``google-genai`` reads
``model_status.message``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.gateway.headers import HEADER_LIMIT, WARNINGS_KEPT
from tests.gateway.serving import serve_on_emulators

STEPS = 300
MODEL = "via-responses"
ASK = "What is the weather in these cities?"
TOOL: Any = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_on_emulators(tmp_path_factory.mktemp("serve-warning-fold")) as (served, _):
        yield served


def _chat_history() -> list[Any]:
    messages: list[Any] = [{"role": "user", "content": ASK}]
    for index in range(STEPS):
        call = {
            "id": f"call_made_up_{index}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": f"c{index}"})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "sunny"})
    return messages


def _anthropic_history() -> list[Any]:
    messages: list[Any] = [{"role": "user", "content": ASK}]
    for index in range(STEPS):
        call_id = f"toolu_made_up_{index}"
        use = {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {}}
        result = {"type": "tool_result", "tool_use_id": call_id, "content": "sunny"}
        messages.append({"role": "assistant", "content": [use]})
        messages.append({"role": "user", "content": [result]})
    return messages


def _chat(url: str, stream: bool) -> tuple[Any, str]:
    """The ``interlock`` member and the ``x-interlock-translation`` header."""
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        create = client.chat.completions.with_raw_response.create
        raw = create(model=MODEL, messages=_chat_history(), tools=[TOOL], stream=stream)
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return (raw.parse().model_extra or {}).get("interlock"), header
        chunks = list(raw.parse())
    (last,) = [c for c in chunks if c.choices and c.choices[0].finish_reason is not None]
    return (last.model_extra or {}).get("interlock"), header


def _anthropic(url: str, stream: bool) -> tuple[Any, str]:
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        raw = client.messages.with_raw_response.create(
            model=MODEL, max_tokens=256, messages=_anthropic_history(), tools=tools, stream=stream
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return (raw.parse().model_extra or {}).get("interlock"), header
        events = list(raw.parse())
    (delta,) = [event for event in events if event.type == "message_delta"]
    return (delta.model_extra or {}).get("interlock"), header


def _counted(url: str) -> dict[str, float]:
    prefix = "interlock_request_warnings_total{"
    return {
        line.split("{", 1)[1].rsplit("}", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in httpx.get(f"{url}/metrics").text.splitlines()
        if line.startswith(prefix)
    }


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    ("client_dialect", "ask"),
    [("openai-chat", _chat), ("anthropic", _anthropic)],
    ids=["chat", "anthropic"],
)
def test_hundreds_of_warnings_reach_the_client_folded_and_are_all_counted(
    url: str, client_dialect: str, ask: Any, stream: bool
) -> None:
    key = f'dialect="{client_dialect}",code="vault_miss",streamed="{str(stream).lower()}"'
    before = _counted(url).get(key, 0)
    field, header = ask(url, stream)
    assert _counted(url).get(key, 0) - before == STEPS  # every warning, not the listed ones
    listed = field["warnings"]
    assert [w["code"] for w in listed] == ["vault_miss"] * (WARNINGS_KEPT + 1)
    locations = [f"messages[{1 + 2 * i}]" for i in range(WARNINGS_KEPT + 1)]
    assert [w["location"] for w in listed] == locations
    assert all("omitted" not in w and "call" in w["message"] for w in listed[:-1])
    omitted = STEPS - WARNINGS_KEPT
    assert listed[-1]["omitted"] == omitted
    assert listed[-1]["message"] == f"... and {omitted} more like this"
    label = field["translation"]
    assert label.endswith(f", {omitted} more vault_miss") and label.count(" at ") == 8
    assert len(header) <= HEADER_LIMIT and header.startswith("degraded; vault_miss at messages[")
    assert len(json.dumps(field)) < 4096  # ~95 KB listed whole at 500 steps


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_gemini_client_reads_the_folded_label(url: str, stream: bool) -> None:
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=ASK)])]
    for index in range(STEPS):
        call = types.FunctionCall(id=f"made_up_{index}", name="get_weather", args={})
        answer = types.FunctionResponse(
            id=f"made_up_{index}", name="get_weather", response={"result": "sunny"}
        )
        contents.append(types.Content(role="model", parts=[types.Part(function_call=call)]))
        contents.append(types.Content(role="user", parts=[types.Part(function_response=answer)]))
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    if stream:
        chunks = list(client.models.generate_content_stream(model=MODEL, contents=contents))
        status = chunks[-1].model_status
    else:
        status = client.models.generate_content(model=MODEL, contents=contents).model_status
    assert status is not None and status.message is not None
    message = status.message
    assert message.startswith(
        "interlock: degraded; vault_miss at messages[1], vault_miss at messages[3]"
    )
    assert message.endswith(f", {STEPS - WARNINGS_KEPT} more vault_miss")
    assert message.count("vault_miss at ") == WARNINGS_KEPT
