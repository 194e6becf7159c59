"""An upstream's failure reaches every client as its own dialect's error, with the status the
upstream meant, through ``interlock serve`` and the official SDKs.

Streamed, the failure is *in-band* (the HTTP status already said 200), and each provider says
it its own way: OpenRouter an integer ``code`` in a Chat chunk, OpenAI a string ``code`` or
``type``, a Responses ``response.failed`` / ``error`` event, a Gemini ``error`` chunk, an
Anthropic ``error`` event. Not streamed, it is the upstream's HTTP error status and body. The
tables say, for each upstream failure and client dialect, what the client's SDK reports: the
OpenAI SDK's ``APIError`` code and type (Chat) or the error event (Responses), the Anthropic
SDK's exception class and error type, google-genai's exception class, ``code`` and google.rpc
``status`` (a 502 is ``UNAVAILABLE``, never a 500 with the status ``"502"``).
"""

from __future__ import annotations

from collections.abc import Iterator
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
from tests.gateway.serving import serve_on_emulators

MODEL = {
    "openai-chat": "via-chat",
    "openai-responses": "via-responses",
    "gemini": "via-gemini",
    "anthropic": "via-anthropic",
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("upstream-failures")
    with serve_on_emulators(directory, FALLING_BACK) as served:
        yield served


FALLING_BACK = """
[[models]]
name = "chat-or-gemini"
retries = 0
fallbacks = ["via-gemini"]
deployments = [{ upstream = "up-chat", model = "chat-emulated" }]
"""


def _chat_chunk(delta: JsonObject) -> JsonObject:
    choice = {"index": 0, "delta": delta, "finish_reason": None}
    return {"id": "c-1", "object": "chat.completion.chunk", "created": 1, "model": "m"} | {
        "choices": [choice]
    }


_CHAT_TEXT = _chat_chunk({"role": "assistant", "content": "Hel"})
_RESPONSE: JsonObject = {"id": "resp_1", "object": "response", "model": "m", "output": []}
_RESPONSES_TEXT: list[Any] = [
    {
        "type": "response.created",
        "sequence_number": 0,
        "response": _RESPONSE | {"status": "in_progress"},
    },
]
_ANTHROPIC_START: JsonObject = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 0},
    },
}
_GEMINI_TEXT: JsonObject = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}, "index": 0}],
    "modelVersion": "m",
}

STREAMS: dict[str, tuple[str, list[Any]]] = {
    "openrouter-502": (
        "openai-chat",
        [_CHAT_TEXT, {"error": {"code": 502, "message": "Provider disconnected"}}, "[DONE]"],
    ),
    "chat-server-error": (
        "openai-chat",
        [
            _CHAT_TEXT,
            {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}},
        ],
    ),
    "responses-failed-429": (
        "openai-responses",
        [
            *_RESPONSES_TEXT,
            {
                "type": "response.failed",
                "sequence_number": 1,
                "response": _RESPONSE
                | {
                    "status": "failed",
                    "error": {"code": "rate_limit_exceeded", "message": "Slow down"},
                },
            },
        ],
    ),
    "responses-error-event": (
        "openai-responses",
        [
            *_RESPONSES_TEXT,
            {"type": "error", "sequence_number": 1, "code": "server_error", "message": "boom"},
        ],
    ),
    "gemini-503": (
        "gemini",
        [_GEMINI_TEXT, {"error": {"code": 503, "message": "Overloaded", "status": "UNAVAILABLE"}}],
    ),
    "anthropic-overloaded": (
        "anthropic",
        [
            _ANTHROPIC_START,
            {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},
        ],
    ),
}

# What each client's SDK reports for each streamed upstream failure.
STREAMED: dict[str, dict[str, tuple[Any, ...]]] = {
    "openrouter-502": {
        "chat": ("APIError", "502", None),  # as sent; the SDK reads ``code`` as a string
        "responses": ("error", "502"),
        "anthropic": ("APIStatusError", "api_error"),
        "gemini": ("ServerError", 502, "UNAVAILABLE"),
    },
    "chat-server-error": {
        "chat": ("APIError", None, "server_error"),
        "responses": ("error", "server_error"),
        "anthropic": ("APIStatusError", "api_error"),
        "gemini": ("ServerError", 500, "INTERNAL"),
    },
    "responses-failed-429": {
        "chat": ("APIError", "rate_limit_exceeded", "rate_limit_error"),
        "responses": ("response.failed", "rate_limit_exceeded"),
        "anthropic": ("APIStatusError", "rate_limit_error"),
        "gemini": ("ClientError", 429, "RESOURCE_EXHAUSTED"),
    },
    "responses-error-event": {
        "chat": ("APIError", "server_error", "server_error"),
        "responses": ("error", "server_error"),
        "anthropic": ("APIStatusError", "api_error"),
        "gemini": ("ServerError", 500, "INTERNAL"),
    },
    "gemini-503": {
        "chat": ("APIError", "UNAVAILABLE", "server_error"),
        "responses": ("error", "UNAVAILABLE"),
        "anthropic": ("APIStatusError", "api_error"),
        "gemini": ("ServerError", 503, "UNAVAILABLE"),
    },
    "anthropic-overloaded": {
        "chat": ("APIError", "overloaded_error", "server_error"),
        "responses": ("error", "overloaded_error"),
        "anthropic": ("APIStatusError", "overloaded_error"),
        "gemini": ("ServerError", 529, "UNAVAILABLE"),
    },
}


def _gemini(url: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, api_version="v1beta")
    return genai.Client(api_key="unused", http_options=options)


def _reported(error: Exception) -> tuple[Any, ...]:
    """What an SDK's exception says: its class and the code a client branches on."""
    name = type(error).__name__
    if isinstance(error, genai_errors.APIError):
        return (name, error.code, error.status)
    if isinstance(error, anthropic.APIStatusError):
        body: Any = error.body
        return (name, body["error"]["type"])
    assert isinstance(error, openai.APIError)
    return (name, error.code, error.type)


def _streamed(dialect: str, url: str, model: str) -> tuple[Any, ...]:
    """What a streaming client of ``dialect`` met: the SDK's exception, or (Responses) the
    failure event; nothing may follow it."""
    messages: Any = [{"role": "user", "content": "hello"}]
    try:
        if dialect == "responses":
            with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
                met = [
                    event
                    for event in client.responses.create(model=model, input="hello", stream=True)
                    if event.type in ("error", "response.failed", "response.completed")
                ]
            assert len(met) == 1, met
            event: Any = met[0]
            code = event.code if event.type == "error" else event.response.error.code
            return (event.type, code)
        if dialect == "chat":
            with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
                list(client.chat.completions.create(model=model, messages=messages, stream=True))
        elif dialect == "anthropic":
            with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
                list(
                    client.messages.create(
                        model=model, max_tokens=64, messages=messages, stream=True
                    )
                )
        else:
            client = _gemini(url)  # held: a collected client closes its connections
            list(client.models.generate_content_stream(model=model, contents="hello"))
    except (openai.APIError, anthropic.APIError, genai_errors.APIError) as error:
        return _reported(error)
    raise AssertionError("the stream ended without the failure")


@pytest.mark.parametrize("dialect", ["chat", "responses", "anthropic", "gemini"])
@pytest.mark.parametrize("case", sorted(STREAMS))
def test_an_in_band_upstream_failure_is_the_clients_error_with_its_status(
    stack: tuple[str, dict[str, Emulator]], case: str, dialect: str
) -> None:
    url, emulators = stack
    upstream, events = STREAMS[case]
    emulators[upstream].brain = ScriptBrain(entries=[{"stream": events}])
    assert _streamed(dialect, url, MODEL[upstream]) == STREAMED[case][dialect]


ANSWERS: dict[str, tuple[str, int, JsonObject]] = {
    "openrouter-502": (
        "openai-chat",
        502,
        {"error": {"code": 502, "message": "Provider disconnected"}},
    ),
    "responses-429": (
        "openai-responses",
        429,
        {"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}},
    ),
    "gemini-503": (
        "gemini",
        503,
        {"error": {"code": 503, "message": "Overloaded", "status": "UNAVAILABLE"}},
    ),
    "anthropic-overloaded": (
        "anthropic",
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
}

# What each client's SDK raises for each upstream error answer (not streamed).
ANSWERED: dict[str, dict[str, tuple[Any, ...]]] = {
    "openrouter-502": {
        "chat": ("InternalServerError", 502),
        "responses": ("InternalServerError", 502),
        "anthropic": ("InternalServerError", 502, "api_error"),
        "gemini": ("ServerError", 502, "UNAVAILABLE"),
    },
    "responses-429": {
        "chat": ("RateLimitError", 429),
        "responses": ("RateLimitError", 429),
        "anthropic": ("RateLimitError", 429, "rate_limit_error"),
        "gemini": ("ClientError", 429, "RESOURCE_EXHAUSTED"),
    },
    "gemini-503": {
        "chat": ("InternalServerError", 503),
        "responses": ("InternalServerError", 503),
        "anthropic": ("ServiceUnavailableError", 503, "api_error"),
        "gemini": ("ServerError", 503, "UNAVAILABLE"),
    },
    "anthropic-overloaded": {
        "chat": ("InternalServerError", 529),
        "responses": ("InternalServerError", 529),
        "anthropic": ("OverloadedError", 529, "overloaded_error"),
        "gemini": ("ServerError", 529, "UNAVAILABLE"),
    },
}


def _answered(dialect: str, url: str, model: str) -> tuple[Any, ...]:
    """The exception a (not streaming) client of ``dialect`` got: class, status, code."""
    messages: Any = [{"role": "user", "content": "hello"}]
    try:
        if dialect in ("chat", "responses"):
            with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
                if dialect == "chat":
                    client.chat.completions.create(model=model, messages=messages)
                else:
                    client.responses.create(model=model, input="hello")
        elif dialect == "anthropic":
            with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
                client.messages.create(model=model, max_tokens=64, messages=messages)
        else:
            client = _gemini(url)
            client.models.generate_content(model=model, contents="hello")
    except genai_errors.APIError as error:
        return (type(error).__name__, error.code, error.status)
    except anthropic.APIStatusError as error:
        body: Any = error.body
        return (type(error).__name__, error.status_code, body["error"]["type"])
    except openai.APIStatusError as error:
        return (type(error).__name__, error.status_code)
    raise AssertionError("the call succeeded")


@pytest.mark.parametrize("dialect", ["chat", "responses", "anthropic", "gemini"])
@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_an_upstream_error_answer_is_the_clients_error_with_its_status(
    stack: tuple[str, dict[str, Emulator]], case: str, dialect: str
) -> None:
    url, emulators = stack
    upstream, status, body = ANSWERS[case]
    entry: JsonObject = {"error": {"status": status, "body": body}}
    emulators[upstream].brain = ScriptBrain(entries=[entry] * 3)  # the gateway retries twice
    assert _answered(dialect, url, MODEL[upstream]) == ANSWERED[case][dialect]


def test_an_openrouter_502_chunk_before_any_content_falls_back(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """The integer code is the status: a 502 first event is an outage like an HTTP 502."""
    url, emulators = stack
    failing: list[Any] = [{"error": {"code": 502, "message": "Provider disconnected"}}, "[DONE]"]
    emulators["openai-chat"].brain = ScriptBrain(entries=[{"stream": failing}])
    emulators["gemini"].brain = ScriptBrain(entries=[])
    messages: Any = [{"role": "user", "content": "hello"}]
    with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="chat-or-gemini", messages=messages, stream=True
        )
        chunks: Any = raw.parse()
        text = "".join(choice.delta.content or "" for chunk in chunks for choice in chunk.choices)
    assert raw.headers["x-interlock-translation"].endswith("fallback to via-gemini")
    assert emulators["openai-chat"].brain.position == 1  # the failing stream was used
    assert text == "You said: hello"
