"""What every emulator does alike (``interlock/emulators/_service.py``), from the official
SDKs over loopback HTTP: structured output, ``n`` / ``candidateCount``, parallel tool calls
with arguments, a bounded request log, a linear-time reading of the prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai import BadRequestError, OpenAI
from pydantic import BaseModel
from starlette.testclient import TestClient

from interlock.emulators import Emulator, create_emulator, emulator_app
from interlock.emulators._brain import named_calls
from interlock.emulators._schema import example
from interlock.emulators._service import RECEIVED_BYTES, RECEIVED_LIMIT
from tests.gateway.serving import emulators_on_loopback

ASK = 'call get_weather with {"city": "Paris", "when": {"day": 1}} and call get_time with {"zone": "CET"}'
CALLS = [("get_weather", {"city": "Paris", "when": {"day": 1}}), ("get_time", {"zone": "CET"})]


class Forecast(BaseModel):
    city: str
    days: int
    rain: bool
    hours: list[float]
    kind: str | None


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[str, dict[str, Emulator]]]:
    with emulators_on_loopback() as running:
        yield running


def _openai(url: str) -> OpenAI:
    return OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def _gemini(url: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="unused", http_options=options)


def _declare(*names: str) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {}}
    return [{"name": name, "parameters": schema} for name in names]


def test_named_calls_reads_each_arguments_object_whole() -> None:
    assert named_calls(ASK) == [
        ("get_weather", '{"city": "Paris", "when": {"day": 1}}'),
        ("get_time", '{"zone": "CET"}'),
    ]
    assert named_calls("use a with {broken and run b") == [("a", "{}"), ("b", "{}")]


def test_a_prompt_of_unclosed_calls_is_read_in_one_pass() -> None:
    """The old pattern rescanned the rest of the prompt at every ``with {`` (quadratic: this
    prompt took hours); the scan must see every call once."""
    prompt = 'call tool_x with {"a": [' * 40_000
    found = named_calls(prompt)
    assert len(found) == 40_000 and found[0] == ("tool_x", "{}")


def test_chat_sdk_gets_parallel_calls_with_arguments(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    tools: Any = [
        {"type": "function", "function": tool} for tool in _declare("get_weather", "get_time")
    ]
    with _openai(url) as client:
        message = (
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": ASK}], tools=tools
            )
            .choices[0]
            .message
        )
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]  # type: ignore[union-attr]  # function calls only
    assert calls == CALLS


def test_responses_sdk_gets_parallel_calls_with_arguments(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    tools: Any = [{"type": "function", **tool} for tool in _declare("get_weather", "get_time")]
    with _openai(url) as client:
        output = client.responses.create(model="m", input=ASK, tools=tools).output
    calls = [
        (item.name, json.loads(item.arguments)) for item in output if item.type == "function_call"
    ]
    assert calls == CALLS


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_sdk_gets_parallel_calls_with_arguments(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, _ = stack
    declarations = [
        types.FunctionDeclaration(name=name, parameters_json_schema={"type": "object"})
        for name in ("get_weather", "get_time")
    ]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=declarations)])
    client = _gemini(url)
    if stream:
        chunks = client.models.generate_content_stream(
            model="gemini-3-flash", contents=ASK, config=config
        )
        calls = [call for chunk in chunks for call in chunk.function_calls or []]
    else:
        answer = client.models.generate_content(model="gemini-3-flash", contents=ASK, config=config)
        calls = answer.function_calls or []
    assert [(call.name, call.args) for call in calls] == CALLS


def test_anthropic_sdk_gets_parallel_calls_with_arguments(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    tools: Any = [
        {"name": name, "input_schema": {"type": "object"}} for name in ("get_weather", "get_time")
    ]
    client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
    answer = client.messages.create(
        model="claude-x", max_tokens=64, messages=[{"role": "user", "content": ASK}], tools=tools
    )
    assert [
        (block.name, block.input) for block in answer.content if block.type == "tool_use"
    ] == CALLS


def test_chat_sdk_parse_gets_an_answer_valid_against_the_schema(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    with _openai(url) as client:
        parsed = client.chat.completions.parse(
            model="m", messages=[{"role": "user", "content": "forecast"}], response_format=Forecast
        )
    assert isinstance(parsed.choices[0].message.parsed, Forecast)


def test_responses_sdk_parse_gets_an_answer_valid_against_the_schema(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    with _openai(url) as client:
        parsed = client.responses.parse(model="m", input="forecast", text_format=Forecast)
    assert isinstance(parsed.output_parsed, Forecast)


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_sdk_response_schema_is_honoured(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, _ = stack
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_schema=Forecast
    )
    client = _gemini(url)
    if stream:
        chunks = client.models.generate_content_stream(
            model="gemini-3-flash", contents="forecast", config=config
        )
        text = "".join(chunk.text or "" for chunk in chunks)
        assert Forecast.model_validate_json(text)
    else:
        answer = client.models.generate_content(
            model="gemini-3-flash", contents="forecast", config=config
        )
        assert isinstance(answer.parsed, Forecast)


def test_json_object_mode_answers_a_json_object(stack: tuple[str, dict[str, Emulator]]) -> None:
    url, _ = stack
    with _openai(url) as client:
        content = (
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "give JSON"}],
                response_format={"type": "json_object"},
            )
            .choices[0]
            .message.content
        )
    assert json.loads(content or "") == {}


def test_an_example_follows_references_and_openapi_types() -> None:
    schema: Any = {
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "type": "OBJECT",
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "tags": {
                "type": "ARRAY",
                "items": {"type": "STRING", "enum": ["a", "b"]},
                "minItems": 2,
            },
            "when": {"type": "string", "format": "date-time"},
            "maybe": {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "null"}]},
        },
    }
    value: Any = example(schema)
    assert value["tags"] == ["a", "a"] and value["maybe"] == 3
    assert value["when"] == "2024-01-01T00:00:00Z"
    depth, node = 0, value["root"]
    while isinstance(node, dict):
        node, depth = node["next"], depth + 1
    assert 1 < depth < 20  # a self-reference stops


@pytest.mark.parametrize("stream", [False, True])
def test_chat_n_gives_that_many_choices(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, _ = stack
    messages: Any = [{"role": "user", "content": "hello"}]
    with _openai(url) as client:
        if stream:
            chunks = client.chat.completions.create(model="m", messages=messages, n=3, stream=True)
            texts = ["", "", ""]
            for chunk in chunks:
                for choice in chunk.choices:
                    texts[choice.index] += choice.delta.content or ""
        else:
            choices = client.chat.completions.create(model="m", messages=messages, n=3).choices
            assert [choice.index for choice in choices] == [0, 1, 2]
            texts = [choice.message.content or "" for choice in choices]
    assert texts == ["You said: hello"] * 3


@pytest.mark.parametrize("n", [0, 129, "2"])
def test_chat_n_out_of_range_is_refused_like_the_service(
    stack: tuple[str, dict[str, Emulator]], n: object
) -> None:
    url, _ = stack
    with _openai(url) as client, pytest.raises(BadRequestError) as caught:
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hello"}],
            n=n,  # type: ignore[arg-type]  # a bad value on purpose
        )
    assert caught.value.status_code == 400
    assert "'n'" in caught.value.message and caught.value.param == "n"  # type: ignore[attr-defined]  # openai APIError carries param


def test_gemini_candidate_count_gives_that_many_candidates(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    config = types.GenerateContentConfig(candidate_count=2)
    client = _gemini(url)
    answer = client.models.generate_content(model="gemini-3-flash", contents="hi", config=config)
    candidates = answer.candidates or []
    assert [candidate.index for candidate in candidates] == [0, 1]
    with pytest.raises(genai_errors.ClientError) as caught:
        client.models.generate_content(
            model="gemini-3-flash",
            contents="hi",
            config=types.GenerateContentConfig(candidate_count=9),
        )
    assert caught.value.code == 400 and "candidate" in str(caught.value)


def test_received_keeps_only_the_most_recent_bodies() -> None:
    emulator = create_emulator("openai-chat", reasoning_dialect="none")
    with TestClient(emulator_app(emulator)) as client:
        for index in range(RECEIVED_LIMIT + 5):
            body = {"model": "m", "messages": [{"role": "user", "content": f"turn {index}"}]}
            assert client.post("/v1/chat/completions", json=body).status_code == 200
    assert len(emulator.received) == RECEIVED_LIMIT
    assert emulator.received[0]["messages"] == [{"role": "user", "content": "turn 5"}]
    assert emulator.received[-1]["messages"][0]["content"] == f"turn {RECEIVED_LIMIT + 4}"  # type: ignore[index, call-overload]  # wire JSON


def test_received_keeps_at_most_its_byte_budget_and_always_the_newest() -> None:
    """Large histories (each a quarter of the budget and more) are not all held: a
    long-running emulator's full garbage collections walk every body it holds."""
    emulator = create_emulator("openai-chat", reasoning_dialect="none")
    filler = "x" * (RECEIVED_BYTES // 4)
    with TestClient(emulator_app(emulator)) as client:
        for index in range(10):
            content = f"turn {index} {filler}"
            body = {"model": "m", "messages": [{"role": "user", "content": content}]}
            assert client.post("/v1/chat/completions", json=body).status_code == 200
        held = [message["messages"][0]["content"][:7] for message in emulator.received]  # type: ignore[index, call-overload]  # wire JSON
        assert held == ["turn 7 ", "turn 8 ", "turn 9 "]  # 4 bodies would exceed the budget
        huge = {"model": "m", "messages": [{"role": "user", "content": filler * 5}]}
        assert client.post("/v1/chat/completions", json=huge).status_code == 200
    assert len(emulator.received) == 1 and emulator.received[0] == huge


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"logprobs": True, "top_logprobs": 21}, "integer_above_max_value"),
        ({"top_logprobs": 2}, "invalid_value"),
    ],
)
def test_chat_top_logprobs_are_checked_like_the_service(
    stack: tuple[str, dict[str, Emulator]], fields: dict[str, Any], code: str
) -> None:
    url, _ = stack
    with _openai(url) as client, pytest.raises(BadRequestError) as caught:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hello"}], **fields
        )
    assert caught.value.code == code and caught.value.param == "top_logprobs"  # type: ignore[attr-defined]  # openai APIError carries param


def test_each_emulator_answers_token_logprobs_when_asked(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    messages: Any = [{"role": "user", "content": "hello"}]
    with _openai(url) as client:
        chat = client.chat.completions.create(
            model="m", messages=messages, logprobs=True, top_logprobs=3
        )
        content = chat.choices[0].logprobs.content if chat.choices[0].logprobs else None
        assert content and "".join(t.token for t in content) == chat.choices[0].message.content
        assert {len(t.top_logprobs) for t in content} == {3}
        plain = client.chat.completions.create(model="m", messages=messages)
        assert plain.choices[0].logprobs is None
        answer = client.responses.create(
            model="m", input="hello", top_logprobs=2, include=["message.output_text.logprobs"]
        )
        texts = [c for item in answer.output if item.type == "message" for c in item.content]
        tokens = [t for text in texts if text.type == "output_text" for t in text.logprobs or []]
        assert tokens and {len(t.top_logprobs) for t in tokens} == {2}
        with pytest.raises(BadRequestError) as caught:
            client.responses.create(model="m", input="hello", extra_body={"n": 2})
        assert caught.value.param == "n"  # type: ignore[attr-defined]  # openai APIError carries param
    config = types.GenerateContentConfig(response_logprobs=True, logprobs=2)
    google = _gemini(url)
    gemini = google.models.generate_content(model="gemini-3-flash", contents="hi", config=config)
    result = (gemini.candidates or [])[0].logprobs_result
    assert result and result.chosen_candidates and result.top_candidates
    with pytest.raises(genai_errors.ClientError) as refused:
        google.models.generate_content(
            model="gemini-3-flash",
            contents="hi",
            config=types.GenerateContentConfig(response_logprobs=True, logprobs=21),
        )
    assert refused.value.code == 400 and "logprobs" in str(refused.value)
