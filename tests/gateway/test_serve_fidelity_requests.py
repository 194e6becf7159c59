"""What clients send that another provider cannot take, through ``interlock serve`` with the
official SDKs, streamed and not (issue 11: hosted tools, OpenRouter tool types and
``video_url``, a URL in Chat ``file.file_data``, structured output in every direction).

* A provider's hosted tool (OpenRouter's ``openrouter:web_search`` in Chat, OpenAI's
  ``web_search`` in Responses, Gemini's ``googleSearch``, Anthropic's ``web_search``) reaches
  its own provider as sent; every other upstream refuses it identically — a 400 in the
  client's error shape with ``hosted_tool_unsupported`` at ``hosted_tools[0]``, nothing sent —
  or, for a model with ``replay_mode = "degrade"``, leaves it out and says so in
  ``x-interlock-translation``.
* OpenRouter's ``video_url`` content part reaches a Chat upstream as sent, Gemini as
  ``fileData``, Responses as an ``input_file`` named ``media_type_dropped``, and is refused
  for Anthropic (no video input).
* A Chat ``file`` whose ``file_data`` is a URL reaches Gemini as ``fileData``, streamed too.
* Structured output from every client SDK (Anthropic's ``output_config.format`` included)
  reaches every upstream as its own schema field when the client streams, and the streamed
  answer is JSON valid for the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

UPSTREAMS = {
    "chat": ("via-chat", "openai-chat"),
    "responses": ("via-responses", "openai-responses"),
    "gemini": ("via-gemini", "gemini"),
    "anthropic": ("via-anthropic", "anthropic"),
}
MODELS = {
    "via-chat": ("up-chat", "chat-emulated"),
    "via-responses": ("up-responses", "gpt-5-emulated"),
    "via-gemini": ("up-gemini", "gemini-3-flash-emulated"),
    "via-anthropic": ("up-anthropic", "claude-emulated"),
}
DEGRADE = "".join(
    f'\n[[models]]\nname = "{name}-degrade"\nupstream = "{upstream}"\nmodel = "{model}"\n'
    'replay_mode = "degrade"\n'
    for name, (upstream, model) in MODELS.items()
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("fidelity-requests")
    with serve_on_emulators(directory, DEGRADE) as (url, emulators):
        yield url, emulators


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def _gemini(url: str) -> genai.Client:
    return genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )


def _hosted_call(client: str, url: str, model: str, stream: bool) -> str:
    """Send ``client``'s own hosted tool; the translation header of the answer."""
    messages: Any = [{"role": "user", "content": "hello"}]
    if client == "chat":
        tools: Any = [{"type": "openrouter:web_search", "parameters": {"max_results": 3}}]
        with _openai(url) as sdk:
            chat = sdk.chat.completions.with_raw_response.create(
                model=model, messages=messages, tools=tools, stream=stream
            )
            _drain(chat.parse())
            return chat.headers["x-interlock-translation"]
    if client == "responses":
        with _openai(url) as sdk:
            responses = sdk.responses.with_raw_response.create(
                model=model, input="hello", tools=[{"type": "web_search"}], stream=stream
            )
            _drain(responses.parse())
            return responses.headers["x-interlock-translation"]
    if client == "anthropic":
        with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as sdk:
            message = sdk.messages.with_raw_response.create(
                model=model,
                max_tokens=256,
                messages=messages,
                tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}],
                stream=stream,
            )
            _drain(message.parse())
            return message.headers["x-interlock-translation"]
    config = types.GenerateContentConfig(tools=[types.Tool(google_search=types.GoogleSearch())])
    gemini = _gemini(url)  # held: a google-genai client closes its connections when collected
    if stream:
        chunks = list(
            gemini.models.generate_content_stream(model=model, contents="hi", config=config)
        )
    else:
        chunks = [gemini.models.generate_content(model=model, contents="hi", config=config)]
    headers = chunks[0].sdk_http_response.headers if chunks[0].sdk_http_response else None
    assert headers is not None
    return headers["x-interlock-translation"]


def _drain(answer: Any) -> None:
    """Read a streamed answer to its end (a whole one is already read)."""
    if not hasattr(answer, "model_extra"):
        for _ in answer:
            pass


def _refusal_code(error: Exception) -> tuple[int, str]:
    """The status and the gateway's refusal code, as each SDK's error holds them."""
    if isinstance(error, openai.APIStatusError):
        return error.status_code, str(error.code)
    if isinstance(error, anthropic.APIStatusError):
        body: Any = error.body
        return error.status_code, body["error"]["details"]["error_code"]
    assert isinstance(error, genai_errors.APIError)
    details: Any = error.details
    return error.code, details["error"]["details"][0]["reason"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("target", sorted(UPSTREAMS))
@pytest.mark.parametrize("client", sorted(UPSTREAMS))
def test_a_hosted_tool_reaches_its_provider_and_is_refused_or_warned_by_every_other(
    stack: tuple[str, dict[str, Emulator]], client: str, target: str, stream: bool
) -> None:
    url, emulators = stack
    model, upstream = UPSTREAMS[target]
    received = emulators[upstream].received
    before = len(received)
    if client == target:
        assert _hosted_call(client, url, model, stream) == "exact"
        assert len(received) == before + 1
        return
    with pytest.raises((openai.APIError, anthropic.APIError, genai_errors.APIError)) as caught:
        _hosted_call(client, url, model, stream)
    assert _refusal_code(caught.value) == (400, "hosted_tool_unsupported")
    assert "hosted_tools[0]" in str(caught.value)
    assert len(received) == before  # nothing was sent
    label = _hosted_call(client, url, f"{model}-degrade", stream)
    assert label.startswith("degraded; ") and "hosted_tool_unsupported at hosted_tools[0]" in label
    sent = received[-1]
    assert len(received) == before + 1
    assert not sent.get("tools")  # the one tool declared was left out


VIDEO: Any = [
    {"type": "text", "text": "what happens?"},
    {"type": "video_url", "video_url": {"url": "https://example.com/clip.mp4"}},
]
FILES: Any = [
    {"type": "text", "text": "summarise both"},
    {"type": "file", "file": {"file_data": "https://example.com/a.pdf", "filename": "a.pdf"}},
    {"type": "file", "file": {"file_data": "JVBERi0x", "filename": "b.pdf"}},
]


def _chat_parts(url: str, model: str, content: Any, stream: bool) -> tuple[str, str]:
    """A Chat request with ``content``; the translation header and the answer's text."""
    messages: Any = [{"role": "user", "content": content}]
    with _openai(url) as sdk:
        raw = sdk.chat.completions.with_raw_response.create(
            model=model, messages=messages, stream=stream
        )
        answer: Any = raw.parse()
        if stream:
            text = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
        else:
            text = answer.choices[0].message.content or ""
        return raw.headers["x-interlock-translation"], text


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_openrouter_video_url_reaches_each_upstream_in_its_form(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    assert _chat_parts(url, "via-chat", VIDEO, stream)[0] == "exact"
    assert emulators["openai-chat"].received[-1]["messages"][0]["content"] == VIDEO
    assert _chat_parts(url, "via-gemini", VIDEO, stream)[0] == "translated"
    parts = emulators["gemini"].received[-1]["contents"][0]["parts"]
    assert parts[1] == {"fileData": {"fileUri": "https://example.com/clip.mp4"}}
    label, text = _chat_parts(url, "via-responses", VIDEO, stream)
    assert label == "degraded; media_type_dropped at messages[0].parts[1]" and text
    content = emulators["openai-responses"].received[-1]["input"][0]["content"]
    assert content[1] == {"type": "input_file", "file_url": "https://example.com/clip.mp4"}
    before = len(emulators["anthropic"].received)
    with pytest.raises(openai.BadRequestError) as caught:
        _chat_parts(url, "via-anthropic", VIDEO, stream)
    assert caught.value.code == "media_unsupported"
    assert len(emulators["anthropic"].received) == before


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_file_data_url_reaches_gemini_as_a_file_uri(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    label, text = _chat_parts(url, "via-gemini", FILES, stream)
    assert text
    assert emulators["gemini"].received[-1]["contents"][0]["parts"][1:] == [
        {"fileData": {"fileUri": "https://example.com/a.pdf"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
    ]
    assert "filename_dropped at messages[0].parts[1]" in label


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def _structured_streamed(client: str, url: str, model: str) -> str:
    """Ask for JSON by ``client``'s own structured-output field, streaming; the text."""
    messages: Any = [{"role": "user", "content": "a city"}]
    if client == "chat":
        response_format: Any = {
            "type": "json_schema",
            "json_schema": {"name": "c", "schema": SCHEMA},
        }
        with _openai(url) as sdk:
            chunks = sdk.chat.completions.create(
                model=model, messages=messages, response_format=response_format, stream=True
            )
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    if client == "responses":
        text: Any = {"format": {"type": "json_schema", "name": "c", "schema": SCHEMA}}
        with _openai(url) as sdk:
            events = sdk.responses.create(model=model, input="a city", text=text, stream=True)
            return "".join(e.delta for e in events if e.type == "response.output_text.delta")
    if client == "anthropic":
        output: Any = {"format": {"type": "json_schema", "schema": SCHEMA}}
        with (
            anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as sdk,
            sdk.messages.stream(
                model=model, max_tokens=256, messages=messages, output_config=output
            ) as stream,
        ):
            return stream.get_final_text()
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=SCHEMA
    )
    gemini = _gemini(url)
    chunks_ = gemini.models.generate_content_stream(model=model, contents="a city", config=config)
    return "".join(chunk.text or "" for chunk in chunks_)


def _schema_sent(body: Any, upstream: str) -> Any:
    if upstream == "openai-chat":
        return body["response_format"]["json_schema"]["schema"]
    if upstream == "openai-responses":
        return body["text"]["format"]["schema"]
    if upstream == "anthropic":
        return body["output_config"]["format"]["schema"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    return body["generationConfig"]["responseJsonSchema"]


@pytest.mark.parametrize("target", sorted(UPSTREAMS))
@pytest.mark.parametrize("client", sorted(UPSTREAMS))
def test_structured_output_streamed_reaches_every_upstream_and_the_answer_is_json(
    stack: tuple[str, dict[str, Emulator]], client: str, target: str
) -> None:
    url, emulators = stack
    model, upstream = UPSTREAMS[target]
    text = _structured_streamed(client, url, model)
    assert _schema_sent(emulators[upstream].received[-1], upstream) == SCHEMA
    assert set(json.loads(text)) == {"city"}


THINKING_STEP: Any = [
    {"role": "user", "content": "weather?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "first thought", "signature": "c2lnMQ=="},
            {"type": "thinking", "thinking": "second thought", "signature": "c2lnMg=="},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "P"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
    },
]


def _thinking_step(url: str, model: str, stream: bool) -> str:
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as sdk:
        raw = sdk.messages.with_raw_response.create(
            model=model, max_tokens=256, messages=THINKING_STEP, tools=tools, stream=stream
        )
        _drain(raw.parse())
        return raw.headers["x-interlock-translation"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("target", "code"),
    [("responses", "reasoning_not_replayable"), ("gemini", "reasoning_dropped")],
)
def test_each_dropped_reasoning_part_of_a_tool_step_is_named_once(
    stack: tuple[str, dict[str, Emulator]], target: str, code: str, stream: bool
) -> None:
    """Two signed thinking blocks of the current tool step cannot go to another provider:
    strict refuses before sending; degrade names each block, once, by its own location."""
    url, emulators = stack
    model, upstream = UPSTREAMS[target]
    before = len(emulators[upstream].received)
    if target == "responses":
        with pytest.raises(anthropic.BadRequestError) as caught:
            _thinking_step(url, model, stream)
        assert _refusal_code(caught.value) == (400, code)
        assert len(emulators[upstream].received) == before
    listed = _thinking_step(url, f"{model}-degrade", stream).partition("; ")[2].split(", ")
    for part in ("messages[1].parts[0]", "messages[1].parts[1]"):
        assert listed.count(f"{code} at {part}") == 1, listed
    assert not any(item.endswith("parts[2]") and code in item for item in listed)
