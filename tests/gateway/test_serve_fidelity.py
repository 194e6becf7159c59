"""Fidelity classes found by the real-traffic corpus, through a real ``interlock serve`` and
the official SDKs: what one dialect's upstream said must reach every client dialect.

Usage in every stream: a Chat upstream sends usage in a last chunk *after* the finish, and
only when asked (``stream_options.include_usage``); the gateway asks, and every client
dialect that can carry usage gets it, streaming and not, with the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai import OpenAI
from pydantic import BaseModel

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

GEMINI_2 = """
[[models]]
name = "via-gemini-2"
upstream = "up-gemini"
model = "gemini-2.5-flash-emulated"
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("fidelity")
    with serve_on_emulators(directory, GEMINI_2) as (url, emulators):
        yield url, emulators


def _responses_usage(url: str, model: str, stream: bool) -> tuple[int, int]:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            usage = client.responses.create(model=model, input="hello").usage
        else:
            events = list(client.responses.create(model=model, input="hello", stream=True))
            completed = [event for event in events if event.type == "response.completed"]
            assert len(completed) == 1
            usage = completed[0].response.usage
    assert usage is not None, "the Responses client was told no usage"
    return usage.input_tokens, usage.output_tokens


def _gemini_usage(url: str, model: str, stream: bool) -> tuple[int, int]:
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    if not stream:
        metadata = client.models.generate_content(model=model, contents="hello").usage_metadata
    else:
        chunks = list(client.models.generate_content_stream(model=model, contents="hello"))
        metadata = chunks[-1].usage_metadata
    assert metadata is not None, "the Gemini client was told no usage"
    prompt = metadata.prompt_token_count or 0
    output = (metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0)
    return prompt, output


def _chat_usage(url: str, model: str, stream: bool) -> tuple[int, int]:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        messages: Any = [{"role": "user", "content": "hello"}]
        if not stream:
            usage = client.chat.completions.create(model=model, messages=messages).usage
        else:
            chunks = list(
                client.chat.completions.create(
                    model=model,
                    messages=messages,
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            with_usage = [chunk for chunk in chunks if chunk.usage is not None]
            assert len(with_usage) == 1 and with_usage[0].choices == []
            usage = with_usage[0].usage
    assert usage is not None, "the Chat client was told no usage"
    return usage.prompt_tokens, usage.completion_tokens


CLIENTS = {"responses": _responses_usage, "gemini": _gemini_usage, "chat": _chat_usage}


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("model", ["via-chat", "via-gemini", "via-responses"])
def test_usage_reaches_every_client_streaming_and_not(
    stack: tuple[str, dict[str, Emulator]], client: str, model: str
) -> None:
    url, _ = stack
    usage = CLIENTS[client]
    streamed, whole = usage(url, model, True), usage(url, model, False)
    assert streamed == whole
    assert streamed[0] > 0 and streamed[1] > 0


def test_a_chat_upstream_is_asked_for_the_usage_chunk_when_streaming(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, emulators = stack
    _responses_usage(url, "via-chat", True)
    assert emulators["openai-chat"].received[-1]["stream_options"] == {"include_usage": True}
    _responses_usage(url, "via-chat", False)
    assert "stream_options" not in emulators["openai-chat"].received[-1]


def test_settings_the_upstream_cannot_take_are_named_in_the_translation_header(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """Every setting has a destination: sent, or named in ``x-interlock-translation``."""
    url, emulators = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        raw = client.chat.completions.with_raw_response.create(
            model="via-gemini",
            messages=[{"role": "user", "content": "hello"}],
            temperature=0.5,
            seed=7,
            user="user-1",
            frequency_penalty=0.25,
        )
    header = raw.headers["x-interlock-translation"]
    assert header.startswith("degraded; ")
    assert "option_dropped at options.user" in header
    sent = emulators["gemini"].received[-1]["generationConfig"]
    assert sent["temperature"] == 0.5 and sent["seed"] == 7
    assert sent["frequencyPenalty"] == 0.25  # a shared setting: carried
    assert raw.parse().choices[0].message.content


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def _structured_from_responses(url: str, model: str) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        text: Any = {"format": {"type": "json_schema", "name": "city", "schema": SCHEMA}}
        client.responses.create(model=model, input="hello", text=text)


def _structured_from_chat(url: str, model: str) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        response_format: Any = {
            "type": "json_schema",
            "json_schema": {"name": "city", "schema": SCHEMA},
        }
        client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "hello"}],
            response_format=response_format,
        )


def _structured_from_gemini(url: str, model: str) -> None:
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=SCHEMA
    )
    client.models.generate_content(model=model, contents="hello", config=config)


def _schema_received(emulators: dict[str, Emulator], upstream: str) -> Any:
    body = emulators[upstream].received[-1]
    if upstream == "openai-chat":
        assert body["response_format"]["type"] == "json_schema"
        return body["response_format"]["json_schema"]["schema"]
    if upstream == "openai-responses":
        assert body["text"]["format"]["type"] == "json_schema"
        return body["text"]["format"]["schema"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    return body["generationConfig"]["responseJsonSchema"]


STRUCTURED = {
    "responses": _structured_from_responses,
    "chat": _structured_from_chat,
    "gemini": _structured_from_gemini,
}
MODELS = {"via-chat": "openai-chat", "via-responses": "openai-responses", "via-gemini": "gemini"}


@pytest.mark.parametrize("client", sorted(STRUCTURED))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_structured_output_reaches_every_upstream(
    stack: tuple[str, dict[str, Emulator]], client: str, model: str
) -> None:
    url, emulators = stack
    STRUCTURED[client](url, model)
    assert _schema_received(emulators, MODELS[model]) == SCHEMA


def _unsigned_tool_history(url: str, model: str) -> types.GenerateContentResponse:
    """A Gemini 2.x-style history: a function call the model made without a signature."""
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather in Paris?")]),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name="get_weather", response={"result": "sunny"}
                    )
                )
            ],
        ),
    ]
    return client.models.generate_content(model=model, contents=contents)


def test_a_gemini_2_history_without_signatures_is_passed_through(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """Gemini 2.x never required thought signatures: the same-dialect passthrough must not
    refuse what the upstream accepts (it did, with missing_signature)."""
    url, emulators = stack
    answer = _unsigned_tool_history(url, "via-gemini-2")
    assert answer.text
    sent = emulators["gemini"].received[-1]["contents"][1]["parts"][0]
    assert "thoughtSignature" not in sent and sent["functionCall"]["name"] == "get_weather"


def test_a_gemini_3_history_without_signatures_is_still_refused_before_sending(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, emulators = stack
    before = len(emulators["gemini"].received)
    with pytest.raises(genai_errors.ClientError) as caught:
        _unsigned_tool_history(url, "via-gemini")
    assert caught.value.code == 400 and "signature" in str(caught.value)
    assert len(emulators["gemini"].received) == before


class City(BaseModel):
    city: str
    population: int


@pytest.mark.parametrize("model", ["via-anthropic", *sorted(MODELS)])
def test_the_openai_sdk_parse_works_through_every_upstream(
    stack: tuple[str, dict[str, Emulator]], model: str
) -> None:
    """Every emulated upstream honours the schema, so ``.parse()`` gets a valid answer."""
    url, _ = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        completion = client.chat.completions.parse(
            model=model, messages=[{"role": "user", "content": "a city"}], response_format=City
        )
    assert completion.choices[0].message.parsed == City(city="text", population=0)
