"""Groq's server-side tool runs through a real ``interlock serve`` (issue 11: no silent drop).

The emulated Chat model answers as Groq's compound systems do: the message lists the tools
Groq ran (``executed_tools``, here a web search), the completion the MCP tools it discovered
(``mcp_list_tools``) and a per-model ``usage_breakdown``. The shapes are hand-written from
Groq's documented response types (no recording with these fields filled is public), not
corpus payloads. The gateway decodes them into the canonical model (hosted parts, the usage's
breakdown): a Chat client gets them back as sent (the ``openai`` SDK keeps them in
``model_extra``; streamed, the listing on a chunk of its own and the breakdown in the finish
chunk's ``x_groq``); a client of another dialect cannot, and reads why from the answer
itself: one ``hosted_tool_dropped`` warning for the run and the listing, and
``usage_breakdown_dropped`` for the breakdown, streamed and not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators._brain import DefaultBrain
from interlock.transcript import HostedToolPart, JsonObject, ModelUsage, Request, Response, Usage
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

QUESTION = "What is the weather in Paris today?"

SEARCH_RUN: JsonObject = {
    "index": 0,
    "type": "search",
    "arguments": '{"query": "weather Paris today"}',
    "output": "Title: Paris forecast\nURL: https://weather.example/paris\nSunny, 21 C",
    "search_results": {
        "results": [
            {
                "title": "Paris forecast",
                "url": "https://weather.example/paris",
                "content": "Sunny, 21 C",
                "score": 0.91,
            }
        ]
    },
}
"""One executed tool as Groq's ``ExecutedTool`` type describes it (hand-written)."""

LISTED: JsonObject = {
    "id": "mcpl_1",
    "type": "mcp_list_tools",
    "server_label": "weather",
    "tools": [{"name": "forecast", "description": "A forecast", "input_schema": {}}],
}
"""One MCP server's discovered tools as Groq's ``McpListTool`` type describes it."""

MODEL_USAGE: JsonObject = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
BREAKDOWN: JsonObject = {"models": [{"model": "openai/gpt-oss-120b", "usage": MODEL_USAGE}]}


class CompoundBrain(DefaultBrain):
    """The default answers, with Groq's tool listing, executed search run and usage
    breakdown."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        listed = HostedToolPart(provider="groq", item_type="mcp_list_tools", item=LISTED)
        run = HostedToolPart(provider="groq", item_type="search", item=SEARCH_RUN)
        message = replace(response.message, parts=(listed, run, *response.message.parts))
        share = ModelUsage(
            model="openai/gpt-oss-120b", usage=Usage(input_tokens=12, output_tokens=7)
        )
        usage = replace(response.usage or Usage(), breakdown=(share,))
        return replace(response, message=message, usage=usage)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-executed-tools")
    with emulators_on_loopback() as (emulator_url, emulators):
        emulators["openai-chat"].brain = CompoundBrain(call_prefix="call_groq")  # type: ignore[union-attr]  # every emulator has a brain
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _codes(field: Any) -> list[tuple[str, str]]:
    assert field is not None, "the answer says nothing"
    return [(warning["code"], warning["location"]) for warning in field["warnings"]]


RUN_DROPPED = ("hosted_tool_dropped", "message")


def _run_dropped(codes: list[tuple[str, str]]) -> bool:
    """One warning for the run and the listing, on the answer's message."""
    return codes.count(RUN_DROPPED) == 1


BREAKDOWN_DROPPED = ("usage_breakdown_dropped", "usage")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_responses_client_is_told_the_run_was_dropped(url: str, stream: bool) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(client.responses.create(model="via-chat", input=QUESTION, stream=True))
            response = next(e for e in events if e.type == "response.completed").response
        else:
            response = client.responses.create(model="via-chat", input=QUESTION)
    assert response.output_text
    said: Any = (response.model_extra or {}).get("interlock")
    codes = _codes(said)
    assert _run_dropped(codes)
    assert BREAKDOWN_DROPPED in codes
    (dropped,) = [w for w in said["warnings"] if w["code"] == "hosted_tool_dropped"]
    assert dropped["message"].startswith("2 of 2 hosted tool")  # the run and the listing
    assert response.usage is not None and response.usage.input_tokens > 0


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_and_gemini_clients_are_told_too(url: str, stream: bool) -> None:
    messages: Any = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        if stream:
            events = list(
                client.messages.create(
                    model="via-chat", max_tokens=256, messages=messages, stream=True
                )
            )
            (said,) = [e for e in events if e.type == "message_delta"]
        else:
            said = client.messages.create(model="via-chat", max_tokens=256, messages=messages)
    codes = _codes((said.model_extra or {}).get("interlock"))
    assert _run_dropped(codes) and BREAKDOWN_DROPPED in codes
    gemini = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    if stream:
        chunks = list(gemini.models.generate_content_stream(model="via-chat", contents=QUESTION))
        status = chunks[-1].model_status
    else:
        status = gemini.models.generate_content(model="via-chat", contents=QUESTION).model_status
    assert status is not None and status.message is not None
    assert "hosted_tool_dropped at message" in status.message
    assert "usage_breakdown_dropped at usage" in status.message


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_chat_client_gets_the_runs_listing_and_breakdown_back(url: str, stream: bool) -> None:
    messages: Any = [{"role": "user", "content": QUESTION}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            chunks = list(
                client.chat.completions.create(model="via-chat", messages=messages, stream=True)
            )
            extras = [chunk.model_extra or {} for chunk in chunks]
            runs = [
                run
                for chunk in chunks
                for choice in chunk.choices
                for run in (choice.delta.model_extra or {}).get("executed_tools") or []
            ]
            listed = [item for extra in extras for item in extra.get("mcp_list_tools") or []]
            groq = [extra["x_groq"] for extra in extras if "x_groq" in extra]
            assert [found.get("usage_breakdown") for found in groq] == [BREAKDOWN]
            assert all("interlock" not in extra for extra in extras)
        else:
            answer = client.chat.completions.create(model="via-chat", messages=messages)
            runs = (answer.choices[0].message.model_extra or {}).get("executed_tools")
            listed = (answer.model_extra or {}).get("mcp_list_tools")
            assert (answer.model_extra or {}).get("usage_breakdown") == BREAKDOWN
            assert "interlock" not in (answer.model_extra or {})
    assert runs == [SEARCH_RUN]
    assert listed == [LISTED]
