"""OpenRouter as the services send it, through ``interlock serve`` and the official SDKs
(issue 11: "reasoning details re-streamed under one index merge into a corrupted detail",
"``[DONE]`` after a Responses stream is rejected").

* OpenRouter's Responses API ends its stream with ``data: [DONE]`` after
  ``response.completed`` and sends no ``event:`` lines: a stub upstream replays a stream
  recorded by simonw/llm-openrouter byte for byte; every client dialect gets the answer and
  its usage, streamed and not (the whole answer is the recorded ``response.completed``'s).
* OpenRouter re-streams Gemini's reasoning as ``reasoning_details`` whose thought text and
  encrypted signature share one ``index`` (its documented detail shapes). A Responses client
  in front of a Chat upstream with ``reasoning_dialect = "openrouter"`` gets the tool call;
  the tool step it sends back must reach the upstream with the two details as they were —
  merged, they would be one corrupted detail, text and data together.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from interlock.emulators import Emulator, create_emulator, emulator_app
from interlock.emulators._brain import ScriptBrain, mint_token
from interlock.emulators.openai_chat import DETAILS_KIND
from tests.gateway.fidelity_clients import DIALECTS, seen
from tests.gateway.serving import app_on_loopback, emulators_on_loopback, gateway_config, serve

RECORDED = (
    Path(__file__).resolve().parents[2]
    / "conformance/corpus/payloads/openrouter"
    / "simonw+llm-openrouter__test_llm_openrouter__test_prompt.json"
)


def _recorded() -> list[Any]:
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    return next(p["wire"] for p in document["payloads"] if p["kind"] == "stream")


class ReplayedResponses:
    """A Responses upstream that answers every request with the recorded stream's bytes (or,
    not streaming, the response its ``response.completed`` event holds), and keeps bodies."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self.wire = _recorded()

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.received.append(body)
        if not body.get("stream"):
            completed = next(e["data"] for e in self.wire if _type(e) == "response.completed")
            return JSONResponse(completed["response"])
        lines = [
            "data: " + (e["data"] if isinstance(e["data"], str) else json.dumps(e["data"]))
            for e in self.wire
        ]
        return Response("\n\n".join(lines) + "\n\n", media_type="text/event-stream")


def _type(event: Any) -> str | None:
    data = event["data"]
    return data.get("type") if isinstance(data, dict) else None


def _extra(openrouter_url: str, stub_url: str) -> str:
    return f"""
[[upstreams]]
name = "up-openrouter-chat"
protocol = "openai-chat"
base_url = "{openrouter_url}/v1"
reasoning_dialect = "openrouter"

[[upstreams]]
name = "up-openrouter-responses"
protocol = "openai-responses"
base_url = "{stub_url}/v1"

[[models]]
name = "via-openrouter-chat"
upstream = "up-openrouter-chat"
model = "google/gemini-3-flash-preview"

[[models]]
name = "via-openrouter-responses"
upstream = "up-openrouter-responses"
model = "openai/gpt-4o"
"""


Stack = tuple[str, Emulator, ReplayedResponses]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("fidelity-openrouter")
    replayed = ReplayedResponses()
    stub = Starlette(routes=[Route("/v1/responses", replayed.handle, methods=["POST"])])
    # A Chat service with OpenRouter's rules (reasoning goes back as reasoning_details).
    openrouter = create_emulator("openai-chat", reasoning_dialect="openrouter")
    with (
        emulators_on_loopback() as (emulator_url, _),
        app_on_loopback(stub) as stub_url,
        app_on_loopback(emulator_app(openrouter)) as openrouter_url,
    ):
        config = directory / "interlock.toml"
        store = f"sqlite:///{directory / 'state.db'}"
        config.write_text(gateway_config(emulator_url, store) + _extra(openrouter_url, stub_url))
        with serve(config, directory) as url:
            yield url, openrouter, replayed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_responses_stream_ending_in_done_reaches_every_client(stack: Stack, dialect: str) -> None:
    url, _, replayed = stack
    wire = replayed.wire
    assert wire[-1]["data"] == "[DONE]" and _type(wire[-2]) == "response.completed"
    usage = wire[-2]["data"]["response"]["usage"]
    whole = seen(dialect, url, "via-openrouter-responses", False)
    streamed = seen(dialect, url, "via-openrouter-responses", True)
    assert replayed.received[-1]["stream"] is True
    for answer in (whole, streamed):
        assert answer.text == "Skipper or Sundance"
        assert answer.usage == (usage["input_tokens"], usage["output_tokens"])
    assert streamed.finish == whole.finish
    assert streamed.response_id == whole.response_id


CALL = {
    "id": "tool_get_weather_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
}
# The emulated service checks its encrypted detail came back unchanged: it is a token bound
# to the call ids (as the real one is bound to the conversation), minted as the service would.
SIGNATURE = mint_token(DETAILS_KIND, "\x01" + CALL["id"])
DETAILS: list[Any] = [
    {"type": "reasoning.text", "text": "Look", "index": 0, "format": "google-gemini-v1"},
    {"type": "reasoning.text", "text": "ing up", "index": 0, "format": "google-gemini-v1"},
    {"type": "reasoning.encrypted", "data": SIGNATURE, "index": 0, "format": "google-gemini-v1"},
]
WHOLE_DETAILS = [{**DETAILS[0], "text": "Looking up"}, DETAILS[2]]


def _chunk(delta: Any, finish: str | None = None, **fields: Any) -> Any:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "google/gemini-3-flash-preview",
        "provider": "Google",
        "choices": [choice],
        **fields,
    }


STREAM: list[Any] = [
    *(_chunk({"role": "assistant", "content": "", "reasoning_details": [d]}) for d in DETAILS),
    _chunk({"tool_calls": [{"index": 0, **CALL}]}),
    _chunk({}, "tool_calls"),
    _chunk(
        {}, "tool_calls", usage={"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}
    ),
    "[DONE]",
]
WHOLE: Any = {
    "id": "gen-1",
    "object": "chat.completion",
    "created": 1,
    "model": "google/gemini-3-flash-preview",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_details": WHOLE_DETAILS,
                "tool_calls": [CALL],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16},
}
TOOLS: Any = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_details_under_one_index_go_back_to_openrouter_as_they_came(
    stack: Stack, stream: bool
) -> None:
    url, emulator, _ = stack
    emulator.brain = ScriptBrain(entries=[{"stream": STREAM} if stream else {"response": WHOLE}])
    model = "via-openrouter-chat"
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        if stream:
            with client.responses.stream(model=model, input="weather?", tools=TOOLS) as events:
                output: Any = events.get_final_response().output
        else:
            output = client.responses.create(model=model, input="weather?", tools=TOOLS).output
        calls = [item for item in output if item.type == "function_call"]
        assert [(c.name, c.arguments) for c in calls] == [("get_weather", '{"city":"Paris"}')]
        history: Any = [
            {"role": "user", "content": "weather?"},
            *(item.model_dump(exclude_none=True) for item in output),
            {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"},
        ]
        answer = client.responses.create(model=model, input=history, tools=TOOLS)
    assert answer.output_text
    sent = emulator.received[-1]["messages"]
    assistant = next(m for m in sent if m["role"] == "assistant")
    assert assistant["reasoning_details"] == WHOLE_DETAILS
    assert [c["id"] for c in assistant["tool_calls"]] == [CALL["id"]]
