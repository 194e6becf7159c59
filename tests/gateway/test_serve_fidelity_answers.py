"""Answers that must never reach a client as something else, through ``interlock serve`` and
the official SDK of every client dialect, streamed and not (issue 11: "wrong or empty
answers", "a tool call without arguments", "one stream failure reported twice").

* A Gemini prompt block (``promptFeedback.blockReason``, no candidates) and a safety stop
  (``finishReason: SAFETY``) are content-filter finishes in every dialect — Chat
  ``content_filter``, Responses ``incomplete`` for ``content_filter``, Anthropic ``refusal``
  — never an empty success. The shapes are the Gemini API's documented response fields.
* Gemini code execution (``executableCode`` / ``codeExecutionResult``, recorded by
  DataDog/dd-trace-py from the Gemini API) reaches a Gemini client as sent; every other client
  gets the text, no untyped item, and a ``hosted_tool_dropped`` warning in the answer.
* A Chat tool call without ``arguments`` (some OpenAI-compatible services omit the key) is a
  call with no arguments for every client.
* An OpenRouter in-band error (a chunk holding ``error``, then ``[DONE]``, as its API
  reference documents mid-stream errors) ends the stream as one failure, never followed by a
  success.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from interlock.emulators import Emulator
from interlock.emulators._brain import ScriptBrain
from interlock.transcript import JsonObject
from tests.gateway.fidelity_clients import DIALECTS, TOOL_NAME, Seen, seen
from tests.gateway.serving import serve_on_emulators

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "payloads"
CODE_EXECUTION = (
    "gemini/DataDog+dd-trace-py__genai__genai_v1beta_models_gemini-2.5-flash"
    "_generateContent_post_459b74a0.json"
)
FILTERED = {
    "chat": "content_filter",
    "responses": "incomplete/content_filter",
    "anthropic": "refusal",
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("fidelity-answers")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def _both(
    stack: tuple[str, dict[str, Emulator]],
    upstream: str,
    entries: tuple[JsonObject, JsonObject],
    dialect: str,
    tool: bool = False,
) -> tuple[Seen, Seen]:
    """The answers to the scripted upstream answer: ``entries`` is the whole answer's script
    entry and the streamed one's."""
    url, emulators = stack
    model = {"gemini": "via-gemini", "openai-chat": "via-chat"}[upstream]
    answers: list[Seen] = []
    for stream, entry in zip((False, True), entries, strict=True):
        emulators[upstream].brain = ScriptBrain(entries=[entry])
        answers.append(seen(dialect, url, model, stream, tool))
    return answers[0], answers[1]


BLOCKED: JsonObject = {
    "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
    "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
    "modelVersion": "gemini-3-flash-emulated",
    "responseId": "blocked-1",
}
STOPPED_FOR_SAFETY: JsonObject = {
    "candidates": [
        {
            "content": {"role": "model", "parts": [{"text": "Partial"}]},
            "finishReason": "SAFETY",
            "index": 0,
            "safetyRatings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH", "blocked": True}
            ],
        }
    ],
    "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 1, "totalTokenCount": 9},
    "modelVersion": "gemini-3-flash-emulated",
    "responseId": "safety-1",
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_prompt_block_is_a_content_filter_finish_never_an_empty_success(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    whole, streamed = _both(
        stack, "gemini", ({"response": BLOCKED}, {"stream": [BLOCKED]}), dialect
    )
    assert streamed == whole
    assert whole.finish == FILTERED.get(dialect, "blocked/PROHIBITED_CONTENT")
    assert (whole.text, whole.calls, whole.usage) == ("", [], (8, 0))
    assert whole.response_id == "blocked-1"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_safety_stop_is_a_content_filter_finish(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    entries = ({"response": STOPPED_FOR_SAFETY}, {"stream": [STOPPED_FOR_SAFETY]})
    whole, streamed = _both(stack, "gemini", entries, dialect)
    assert streamed == whole
    assert whole.finish == FILTERED.get(dialect, "SAFETY")
    assert whole.text == "Partial"


def _code_execution() -> JsonObject:
    document = json.loads((CORPUS / CODE_EXECUTION).read_text(encoding="utf-8"))
    return next(p["wire"] for p in document["payloads"] if p["kind"] == "response")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_gemini_code_execution_reaches_every_client_with_its_text_and_said_when_dropped(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    recorded = _code_execution()
    parts = recorded["candidates"][0]["content"]["parts"]
    kinds = [next(iter(part)) for part in parts]  # text, executableCode, its result, text
    assert "executableCode" in kinds and "codeExecutionResult" in kinds
    text = "".join(part.get("text", "") for part in parts)
    whole, streamed = _both(
        stack, "gemini", ({"response": recorded}, {"response": recorded}), dialect
    )
    for answer in (whole, streamed):
        assert answer.text == text
        if dialect == "gemini":
            assert answer.label is None
            assert answer.item_types == kinds  # the parts in order, code execution included
        else:
            assert answer.label == "degraded; hosted_tool_dropped at message"
    if dialect == "responses":  # every output item is typed: the SDK parsed it as a message
        assert set(whole.item_types) == set(streamed.item_types) == {"message"}
    else:
        assert streamed.item_types == whole.item_types


def test_gemini_code_execution_gives_a_responses_client_the_same_items_streamed_and_not(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    recorded = _code_execution()
    whole, streamed = _both(
        stack, "gemini", ({"response": recorded}, {"response": recorded}), "responses"
    )
    assert streamed.item_types == whole.item_types


def _chunk(delta: JsonObject | None, finish: str | None = None, **fields: Any) -> JsonObject:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "c-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        **fields,
    }


NO_ARGUMENTS_CALL = {"id": "call_1", "type": "function", "function": {"name": TOOL_NAME}}
NO_ARGUMENTS: JsonObject = {
    "id": "c-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": None, "tool_calls": [NO_ARGUMENTS_CALL]},
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}
NO_ARGUMENTS_STREAM: list[Any] = [
    _chunk({"role": "assistant", "tool_calls": [{"index": 0, **NO_ARGUMENTS_CALL}]}),
    _chunk({}, "tool_calls"),
    _chunk(None, usage=NO_ARGUMENTS["usage"]),
    "[DONE]",
]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tool_call_without_arguments_reaches_every_client_as_a_call_without_arguments(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    entries = ({"response": NO_ARGUMENTS}, {"stream": NO_ARGUMENTS_STREAM})
    whole, streamed = _both(stack, "openai-chat", entries, dialect, tool=True)
    assert streamed == whole
    assert (whole.calls, whole.call_ids, whole.usage) == ([(TOOL_NAME, {})], ["call_1"], (5, 3))
    assert (
        whole.finish
        == {
            "chat": "tool_calls",
            "responses": "completed",
            "gemini": "STOP",
            "anthropic": "tool_use",
        }[dialect]
    )


IN_BAND_ERROR: list[Any] = [
    _chunk({"role": "assistant", "content": "Hel"}),
    _chunk({"content": ""}, "error", error={"code": 502, "message": "Provider disconnected"}),
    "[DONE]",
]


def _failure_seen_streaming(dialect: str, url: str) -> list[str]:
    """What a streaming client of ``dialect`` met after the text: error events or the error
    its SDK raised, and any answer that followed them."""
    met: list[str] = []
    messages: Any = [{"role": "user", "content": "hello"}]
    if dialect == "responses":
        with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
            for event in client.responses.create(model="via-chat", input="hello", stream=True):
                if event.type in ("error", "response.failed", "response.completed"):
                    met.append(event.type)
        return met
    try:
        if dialect == "chat":
            with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
                for chunk in client.chat.completions.create(
                    model="via-chat", messages=messages, stream=True
                ):
                    met.extend(
                        f"finish:{c.finish_reason}" for c in chunk.choices if c.finish_reason
                    )
        elif dialect == "anthropic":
            with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
                for event in client.messages.create(
                    model="via-chat", max_tokens=64, messages=messages, stream=True
                ):
                    if event.type == "message_stop":
                        met.append(event.type)
        else:
            client = genai.Client(
                api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
            )
            for chunk in client.models.generate_content_stream(model="via-chat", contents="hello"):
                if chunk.candidates and chunk.candidates[0].finish_reason:
                    met.append(f"finish:{chunk.candidates[0].finish_reason.value}")
    except (openai.APIError, anthropic.APIError, genai_errors.APIError) as error:
        met.append(f"raised:{type(error).__name__}")
    return met


RAISED = {
    "chat": ["raised:APIError"],
    "anthropic": ["raised:APIStatusError"],
    "gemini": ["raised:ServerError"],
    "responses": ["error"],
}


@pytest.mark.parametrize(
    "dialect",
    [
        "chat",
        "anthropic",
        "gemini",
        "responses",
    ],
)
def test_an_in_band_stream_error_is_one_failure_and_nothing_after_it(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    url, emulators = stack
    emulators["openai-chat"].brain = ScriptBrain(entries=[{"stream": IN_BAND_ERROR}])
    assert _failure_seen_streaming(dialect, url) == RAISED[dialect]
