"""Gemini wire variants seen in real traffic, through a real ``interlock serve``.

* snake_case field names (``generation_config.response_json_schema``, ``function_call``…),
  which the REST API accepts and some clients send: translated like their camelCase twins,
  streaming and not, never dropped;
* Gemini 3 server-side tool parts (``toolCall`` / ``toolResponse``): the google-genai client
  gets them as such, and they go back to Gemini exactly as received.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai import OpenAI

from interlock.codecs.gemini import wire_spelling
from interlock.emulators import Emulator
from interlock.emulators._brain import ScriptBrain
from interlock.emulators.gemini import GeminiEmulator
from interlock.transcript import JsonObject
from tests.gateway.serving import serve_on_emulators

SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"first_name": {"type": "string"}},
    "required": ["first_name"],
}


SIGNATURE_MODELS = """
[[models]]
name = "gemini-2-signed"
upstream = "up-gemini"
model = "gemini-2.5-flash-emulated"
thought_signatures = "required"

[[models]]
name = "gemini-2-signed-routed"
thought_signatures = "required"
deployments = [
  { upstream = "up-gemini", model = "gemini-2.5-flash-emulated" },
  { upstream = "up-gemini", model = "gemini-2.0-flash-emulated" },
]

[[models]]
name = "tuned-unsigned"
upstream = "up-gemini"
model = "tuned-model-emulated"
thought_signatures = "optional"
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("gemini-wire")
    with serve_on_emulators(directory, SIGNATURE_MODELS) as (url, emulators):
        yield url, emulators


def _snake_body() -> JsonObject:
    """A tool step in snake_case, as llm-gemini and recorded cassettes send it."""
    return {
        "system_instruction": {"parts": [{"text": "Answer as JSON."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Name a pelican."}]},
            {
                "role": "model",
                "parts": [
                    {"function_call": {"id": "c1", "name": "namer", "args": {"kind": "pelican"}}}
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "id": "c1",
                            "name": "namer",
                            "response": {"output": "Charles"},
                        }
                    }
                ],
            },
        ],
        "tools": [
            {
                "function_declarations": [
                    {"name": "namer", "parameters_json_schema": {"type": "object"}}
                ]
            }
        ],
        "generation_config": {
            "max_output_tokens": 64,
            "response_mime_type": "application/json",
            "response_json_schema": SCHEMA,
        },
    }


def _post_gemini(url: str, model: str, body: JsonObject, stream: bool) -> httpx.Response:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return httpx.post(f"{url}/v1beta/models/{model}:{method}", json=body, timeout=60)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_snake_case_request_reaches_a_chat_upstream_whole(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    answer = _post_gemini(url, "via-chat", _snake_body(), stream)
    assert answer.status_code == 200, answer.text
    sent = emulators["openai-chat"].received[-1]
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA
    assert sent["max_completion_tokens"] == 64 or sent.get("max_tokens") == 64
    assert sent["tools"][0]["function"]["name"] == "namer"
    roles = [message["role"] for message in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    call = sent["messages"][2]["tool_calls"][0]
    assert (call["id"], json.loads(call["function"]["arguments"])) == ("c1", {"kind": "pelican"})
    assert sent["messages"][3]["tool_call_id"] == "c1"


def test_a_snake_case_request_translated_to_gemini_comes_out_in_camel_case(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """Through a Chat client on a Gemini upstream nothing is snake_case to begin with; the
    gateway's own Gemini wire is camelCase, which the emulator (like the service) checks."""
    url, emulators = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        response_format: Any = {
            "type": "json_schema",
            "json_schema": {"name": "n", "schema": SCHEMA},
        }
        client.chat.completions.create(
            model="via-gemini",
            messages=[{"role": "user", "content": "Name a pelican."}],
            response_format=response_format,
        )
    sent = emulators["gemini"].received[-1]
    assert sent["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": SCHEMA,
    }


SERVER_TOOL_PARTS: list[JsonObject] = [
    {
        "toolCall": {
            "id": "srv_1",
            "toolType": "GOOGLE_SEARCH_WEB",
            "args": {"queries": ["pelicans"]},
        },
        "thoughtSignature": "c2VydmVyLXNpZGU=",
    },
    {"toolResponse": {"id": "srv_1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"hits": 3}}},
    {"text": "Pelicans are large water birds."},
]


def _scripted(emulator: Emulator, stream: bool) -> None:
    final: JsonObject = {
        "candidates": [{"finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6, "totalTokenCount": 10},
        "responseId": "srv-r1",
        "modelVersion": "gemini-3-flash-emulated",
    }
    if stream:
        chunks: list[Any] = [
            {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]}
            for part in SERVER_TOOL_PARTS
        ]
        entry: JsonObject = {"stream": [*chunks, final]}
    else:
        content = {"role": "model", "parts": SERVER_TOOL_PARTS}
        entry = {
            "response": {
                **final,
                "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
            }
        }
    assert isinstance(emulator, GeminiEmulator)
    emulator.brain = ScriptBrain(entries=[entry])


def _parts(response: types.GenerateContentResponse) -> list[types.Part]:
    """The parts of the first candidate (none in a chunk that only finishes)."""
    content = response.candidates[0].content if response.candidates else None
    return list(content.parts or []) if content is not None else []


def _client(url: str) -> genai.Client:
    return genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_server_side_tool_parts_reach_the_google_genai_client_and_go_back_exactly(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    _scripted(emulators["gemini"], stream)
    client = _client(url)
    tools = [types.Tool(google_search=types.GoogleSearch())]
    config = types.GenerateContentConfig(tools=tools)
    if stream:
        chunks = list(
            client.models.generate_content_stream(
                model="via-gemini", contents="pelicans?", config=config
            )
        )
        parts = [part for chunk in chunks for part in _parts(chunk)]
    else:
        answer = client.models.generate_content(
            model="via-gemini", contents="pelicans?", config=config
        )
        parts = _parts(answer)
    assert parts[0].tool_call is not None and parts[0].tool_call.id == "srv_1"
    assert parts[0].thought_signature == b"server-side"
    assert parts[1].tool_response is not None and parts[1].tool_response.response == {"hits": 3}
    assert "".join(part.text or "" for part in parts[2:]) == "Pelicans are large water birds."
    history = [
        types.Content(role="user", parts=[types.Part(text="pelicans?")]),
        types.Content(role="model", parts=parts),
        types.Content(role="user", parts=[types.Part(text="and their wings?")]),
    ]
    client.models.generate_content(model="via-gemini", contents=history, config=config)
    replayed = emulators["gemini"].received[-1]["contents"][1]["parts"]
    # google-genai 3.6.1 itself writes ``tool_type`` in snake_case inside ``toolCall``; the
    # same-dialect passthrough forwards what the client sent, which the service accepts.
    assert wire_spelling(replayed[:2]) == SERVER_TOOL_PARTS[:2]
    assert replayed[0]["thoughtSignature"] == "c2VydmVyLXNpZGU="


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_responses_client_gets_the_answer_and_no_false_reasoning(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    """The signed ``toolCall`` was once decoded as encrypted reasoning and shown as such."""
    url, emulators = stack
    _scripted(emulators["gemini"], stream)
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(
                client.responses.create(model="via-gemini", input="pelicans?", stream=True)
            )
            done = [event for event in events if event.type == "response.completed"]
            output = done[0].response.output
        else:
            output = client.responses.create(model="via-gemini", input="pelicans?").output
    assert [item.type for item in output] == ["message"]
    message = output[0]
    assert message.type == "message"
    assert [part.type for part in message.content] == ["output_text"]
    assert "".join(getattr(part, "text", "") for part in message.content) == (
        "Pelicans are large water birds."
    )


def test_server_side_tool_parts_are_refused_before_reaching_another_upstream(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """A Chat upstream cannot carry the service's own tool run: a 400 naming the part, and
    nothing sent (strict, the default replay mode)."""
    url, emulators = stack
    before = len(emulators["openai-chat"].received)
    body: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "pelicans?"}]},
            {"role": "model", "parts": SERVER_TOOL_PARTS},
            {"role": "user", "parts": [{"text": "and their wings?"}]},
        ]
    }
    answer = _post_gemini(url, "via-chat", body, False)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and "messages[1].parts[0]" in error["message"]
    assert len(emulators["openai-chat"].received) == before


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_google_genai_schema_tool_reaches_a_chat_upstream_as_json_schema(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    """google-genai writes ``types.Schema`` as the OpenAPI subset (``"type": "OBJECT"``), which
    OpenAI rejects; the Chat upstream gets JSON Schema."""
    url, emulators = stack
    declaration = types.FunctionDeclaration(
        name="sum_numbers",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={"a": types.Schema(type=types.Type.NUMBER, nullable=True)},
            required=["a"],
        ),
    )
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declaration])])
    client = _client(url)
    if stream:
        list(client.models.generate_content_stream(model="via-chat", contents="hi", config=config))
    else:
        client.models.generate_content(model="via-chat", contents="hi", config=config)
    sent = emulators["openai-chat"].received[-1]["tools"][0]["function"]["parameters"]
    assert sent == {
        "type": "object",
        "properties": {"a": {"type": ["number", "null"]}},
        "required": ["a"],
    }


def test_tools_sent_as_one_object_are_read(stack: tuple[str, dict[str, Emulator]]) -> None:
    url, emulators = stack
    body: JsonObject = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": {
            "functionDeclarations": [{"name": "namer", "parametersJsonSchema": {"type": "object"}}]
        },
    }
    answer = _post_gemini(url, "via-chat", body, False)
    assert answer.status_code == 200, answer.text
    assert emulators["openai-chat"].received[-1]["tools"][0]["function"]["name"] == "namer"


def _unsigned_history(url: str, model: str, stream: bool) -> str:
    """A tool step whose call carries no thought signature, from the google-genai client."""
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    result = types.FunctionResponse(name="get_weather", response={"result": "sunny"})
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather in Paris?")]),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(role="user", parts=[types.Part(function_response=result)]),
    ]
    client = _client(url)
    if stream:
        chunks = client.models.generate_content_stream(model=model, contents=contents)
        return "".join(part.text or "" for chunk in chunks for part in _parts(chunk))
    return client.models.generate_content(model=model, contents=contents).text or ""


@pytest.mark.parametrize("model", ["gemini-2-signed", "gemini-2-signed-routed"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_model_configured_to_require_signatures_is_checked_before_sending(
    stack: tuple[str, dict[str, Emulator]], stream: bool, model: str
) -> None:
    """By name Gemini 2.5 needs no signatures; ``thought_signatures = "required"`` says it
    does, and the unsigned history is refused by the gateway, nothing sent."""
    url, emulators = stack
    before = len(emulators["gemini"].received)
    with pytest.raises(genai_errors.ClientError) as caught:
        _unsigned_history(url, model, stream)
    assert caught.value.code == 400 and "signature" in str(caught.value)
    assert len(emulators["gemini"].received) == before


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", ["gemini", "chat"])
def test_a_model_configured_without_signatures_gets_the_unsigned_history(
    stack: tuple[str, dict[str, Emulator]], stream: bool, client: str
) -> None:
    """An unknown model name gets the signature rule; ``thought_signatures = "optional"``
    lifts it, for a same-dialect passthrough and a translated request alike."""
    url, emulators = stack
    emulator = emulators["gemini"]
    assert isinstance(emulator, GeminiEmulator)
    emulator.require_signatures = False  # the upstream model takes unsigned calls
    try:
        if client == "gemini":
            answer = _unsigned_history(url, "tuned-unsigned", stream)
        else:
            answer = _chat_unsigned_history(url, "tuned-unsigned", stream)
    finally:
        emulator.require_signatures = None
    assert answer
    sent = emulator.received[-1]["contents"][1]["parts"][0]
    assert "thoughtSignature" not in sent and sent["functionCall"]["name"] == "get_weather"


def _chat_unsigned_history(url: str, model: str, stream: bool) -> str:
    messages: Any = [
        {"role": "user", "content": "weather in Paris?"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            chunks = client.chat.completions.create(model=model, messages=messages, stream=True)
            return "".join(
                chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices
            )
        return (
            client.chat.completions.create(model=model, messages=messages)
            .choices[0]
            .message.content
            or ""
        )


def _streamed_arguments(emulator: Emulator) -> None:
    """A Vertex-style answer whose call arguments stream in fragments (``partialArgs``)."""

    def chunk(part: JsonObject | None, finish: bool = False) -> JsonObject:
        candidate: JsonObject = {"index": 0}
        if part is not None:
            candidate["content"] = {"role": "model", "parts": [part]}
        if finish:
            candidate["finishReason"] = "STOP"
        return {"candidates": [candidate], "responseId": "vx-1", "modelVersion": "gemini-3-pro"}

    fragments: list[Any] = [
        chunk({"functionCall": {"id": "fc_9", "name": "get_weather", "willContinue": True}}),
        chunk(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "San ", "willContinue": True}
                    ],
                    "willContinue": True,
                }
            }
        ),
        chunk(
            {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Francisco"}]}}
        ),
        chunk({"functionCall": {}}),
        {
            **chunk(None, finish=True),
            "usageMetadata": {"promptTokenCount": 2, "totalTokenCount": 2},
        },
    ]
    assert isinstance(emulator, GeminiEmulator)
    emulator.brain = ScriptBrain(entries=[{"stream": fragments}])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_streamed_call_arguments_reach_a_chat_client_whole(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    _streamed_arguments(emulators["gemini"])
    messages: Any = [{"role": "user", "content": "weather in San Francisco?"}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            chunks = list(
                client.chat.completions.create(model="via-gemini", messages=messages, stream=True)
            )
            deltas = [
                call
                for chunk in chunks
                if chunk.choices
                for call in chunk.choices[0].delta.tool_calls or []
            ]
            name = "".join(call.function.name or "" for call in deltas if call.function)
            arguments = "".join(call.function.arguments or "" for call in deltas if call.function)
            call_id = next(call.id for call in deltas if call.id)
        else:
            message = (
                client.chat.completions.create(model="via-gemini", messages=messages)
                .choices[0]
                .message
            )
            assert message.tool_calls is not None and len(message.tool_calls) == 1
            function = message.tool_calls[0]
            assert function.type == "function"
            name, arguments, call_id = (
                function.function.name,
                function.function.arguments,
                function.id,
            )
    assert (name, call_id) == ("get_weather", "fc_9")
    assert json.loads(arguments) == {"city": "San Francisco"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_streamed_call_arguments_reach_a_google_genai_client(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    """Same dialect: the stream is relayed; put together the way the SDK's users do
    (name from the first fragment, arguments from ``partial_args``), or whole."""
    url, emulators = stack
    _streamed_arguments(emulators["gemini"])
    client = _client(url)
    if stream:
        chunks = list(
            client.models.generate_content_stream(model="via-gemini", contents="weather?")
        )
        calls = [
            part.function_call for chunk in chunks for part in _parts(chunk) if part.function_call
        ]
        assert calls[0].name == "get_weather" and calls[0].id == "fc_9"
        text = "".join(
            arg.string_value or ""
            for call in calls
            for arg in call.partial_args or []
            if arg.json_path == "$.city"
        )
        assert text == "San Francisco"
    else:
        answer = client.models.generate_content(model="via-gemini", contents="weather?")
        calls = [part.function_call for part in _parts(answer) if part.function_call]
        assert len(calls) == 1 and calls[0].args == {"city": "San Francisco"}
        assert (calls[0].name, calls[0].id) == ("get_weather", "fc_9")


def test_chat_files_reach_gemini_as_a_url_and_as_data(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """A Chat ``file`` whose ``file_data`` is a URL goes to Gemini as ``fileData``; base64
    goes as ``inlineData`` with the type its name gives; the file names Gemini would refuse
    are named in the translation header instead."""
    url, emulators = stack
    content: Any = [
        {"type": "text", "text": "summarise both"},
        {"type": "file", "file": {"file_data": "https://example.com/a.pdf", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_data": "JVBERi0x", "filename": "b.pdf"}},
    ]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        raw = client.chat.completions.with_raw_response.create(
            model="via-gemini", messages=[{"role": "user", "content": content}]
        )
    assert raw.parse().choices[0].message.content
    parts = emulators["gemini"].received[-1]["contents"][0]["parts"]
    assert parts[1:] == [
        {"fileData": {"fileUri": "https://example.com/a.pdf"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
    ]
    assert "filename_dropped at messages[0].parts[1]" in raw.headers["x-interlock-translation"]
