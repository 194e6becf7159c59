"""The Gemini emulator on a real loopback server, driven by the official ``google-genai`` SDK."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from google import genai
from google.genai import errors, types
from starlette.types import Receive, Scope, Send

from interlock.codecs import gemini
from interlock.codecs._sse import SseParser
from interlock.codecs.gemini._preflight import (
    CALL_AFTER_USER,
    COUNT_MISMATCH,
    INVALID_SIGNATURE,
    RESPONSE_AFTER_CALL,
)
from interlock.emulators._brain import ScriptBrain
from interlock.emulators.gemini import GeminiEmulator, create_app
from interlock.transcript import (
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    fold_updates,
)

MODEL = "gemini-3-flash-preview"
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="Weather by city",
            parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        )
    ]
)
ASK = 'Please call get_weather with {"city": "Paris"}'


@dataclass
class _Holder:
    """An ASGI app that delegates to whichever emulator app a test installed."""

    app: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[_Holder, str]]:
    holder = _Holder()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    instance = uvicorn.Server(uvicorn.Config(holder, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not instance.started:
        time.sleep(0.01)
    yield holder, f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=5)
    sock.close()


def install(
    server: tuple[_Holder, str], brain: ScriptBrain | None = None, **options: Any
) -> tuple[GeminiEmulator, genai.Client, str]:
    holder, base_url = server
    emulator = GeminiEmulator(brain, **options)
    holder.app = create_app(emulator)
    client = genai.Client(
        api_key="x",
        http_options=types.HttpOptions(
            base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    return emulator, client, base_url


def tools_config(include_thoughts: bool = False) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=[WEATHER],
        thinking_config=types.ThinkingConfig(include_thoughts=include_thoughts),
    )


def test_sdk_text_response_carries_a_signature_on_the_last_part(
    server: tuple[_Holder, str],
) -> None:
    emulator, client, _ = install(server)
    response = client.models.generate_content(model=MODEL, contents="Hello there")
    assert response.text == "You said: Hello there"
    parts = response.candidates[0].content.parts  # type: ignore[index, union-attr]  # one candidate
    assert parts is not None and parts[-1].thought_signature
    assert response.usage_metadata is not None and response.usage_metadata.thoughts_token_count == 4
    assert emulator.received == [
        {"contents": [{"parts": [{"text": "Hello there"}], "role": "user"}]}
    ]


def test_sdk_tool_round_trip_replays_the_signature(server: tuple[_Holder, str]) -> None:
    emulator, client, _ = install(server)
    user = types.Content(role="user", parts=[types.Part(text=ASK)])
    first = client.models.generate_content(model=MODEL, contents=[user], config=tools_config(True))
    (call,) = first.function_calls or []
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert call.id
    model_turn = first.candidates[0].content  # type: ignore[index]  # one candidate
    assert model_turn is not None and model_turn.parts is not None
    assert model_turn.parts[0].thought is True
    signature = model_turn.parts[1].thought_signature
    assert signature
    answer = types.Part(
        function_response=types.FunctionResponse(
            id=call.id, name="get_weather", response={"output": "15 C"}
        )
    )
    second = client.models.generate_content(
        model=MODEL,
        contents=[user, model_turn, types.Content(role="user", parts=[answer])],
        config=tools_config(),
    )
    assert second.text == "Done: get_weather returned 15 C"
    replayed = emulator.received[1]["contents"][1]["parts"][1]  # type: ignore[index, call-overload]  # wire JSON
    # The SDK re-encodes the signature URL-safe (trap 9): same bytes, maybe another string.
    from interlock.codecs.gemini._preflight import signature_bytes

    assert signature_bytes(replayed["thoughtSignature"]) == signature  # type: ignore[index, arg-type]


def test_sdk_missing_signature_is_refused_with_the_services_message(
    server: tuple[_Holder, str],
) -> None:
    _, client, _ = install(server)
    user = types.Content(role="user", parts=[types.Part(text=ASK)])
    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    answer = types.Part(
        function_response=types.FunctionResponse(name="get_weather", response={"output": "x"})
    )
    contents = [
        user,
        types.Content(role="model", parts=[call]),
        types.Content(role="user", parts=[answer]),
    ]
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents=contents, config=tools_config())
    assert caught.value.code == 400
    assert caught.value.status == "INVALID_ARGUMENT"
    assert "Function call is missing a thought_signature in functionCall parts" in str(
        caught.value.message
    )
    assert "`default_api:get_weather` , position 2" in str(caught.value.message)
    forged = call.model_copy(update={"thought_signature": b"not a real signature"})
    contents[1] = types.Content(role="model", parts=[forged])
    with pytest.raises(errors.ClientError) as invalid:
        client.models.generate_content(model=MODEL, contents=contents, config=tools_config())
    assert invalid.value.message == INVALID_SIGNATURE
    # Gemini 2.x does not enforce signatures.
    older = client.models.generate_content(
        model="gemini-2.5-flash", contents=contents, config=tools_config()
    )
    assert older.text == "Done: get_weather returned x"


def test_sdk_streams_text_and_calls(server: tuple[_Holder, str]) -> None:
    _, client, _ = install(server)
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="Hi"))
    assert "".join(chunk.text or "" for chunk in chunks) == "You said: Hi"
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]  # final chunk
    signed = [
        part
        for chunk in chunks
        for part in (chunk.candidates[0].content.parts or [] if chunk.candidates[0].content else [])  # type: ignore[index]
        if part.thought_signature
    ]
    assert len(signed) == 1 and signed[0].text == ""
    calls = list(
        client.models.generate_content_stream(
            model=MODEL, contents=ASK, config=tools_config(include_thoughts=True)
        )
    )
    function_calls = [call for chunk in calls for call in chunk.function_calls or []]
    assert [call.name for call in function_calls] == ["get_weather"]
    thoughts = [
        part.text
        for chunk in calls
        if chunk.candidates and chunk.candidates[0].content
        for part in chunk.candidates[0].content.parts or []
        if part.thought
    ]
    assert thoughts == ["Thinking about the request."]
    assert calls[-1].usage_metadata is not None


def test_stream_without_alt_sse_is_a_json_array(server: tuple[_Holder, str]) -> None:
    _, _, base_url = install(server)
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    reply = httpx.post(f"{base_url}/v1beta/models/{MODEL}:streamGenerateContent", json=body)
    chunks = reply.json()
    assert isinstance(chunks, list) and chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    decoder = gemini.StreamDecoder()
    updates = [update for chunk in chunks for update in decoder.feed_chunk(chunk)]
    assert fold_updates(updates).message.text == "You said: Hi"


def post(base_url: str, body: dict[str, Any], model: str = MODEL) -> httpx.Response:
    return httpx.post(f"{base_url}/v1beta/models/{model}:generateContent", json=body)


USER = {"role": "user", "parts": [{"text": "hi"}]}
CALL = {
    "role": "model",
    "parts": [
        {
            "functionCall": {"name": "f", "args": {}},
            "thoughtSignature": "skip_thought_signature_validator",
        }
    ],
}
RESULT = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        ([USER, RESULT], RESPONSE_AFTER_CALL),
        ([CALL, RESULT], CALL_AFTER_USER),
        (
            [USER, CALL, {"role": "user", "parts": [RESULT["parts"][0], RESULT["parts"][0]]}],
            COUNT_MISMATCH,
        ),  # type: ignore[index]
        ([USER, CALL, USER], COUNT_MISMATCH),
    ],
)
def test_turn_rules_use_the_services_strings(
    server: tuple[_Holder, str], contents: list[Any], message: str
) -> None:
    _, _, base_url = install(server)
    reply = post(base_url, {"contents": contents})
    assert reply.status_code == 400
    assert reply.json() == {
        "error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
    }


@pytest.mark.parametrize(
    ("body", "name", "where"),
    [
        ({"contents": [USER], "thoughtSig": 1}, "thoughtSig", ""),
        (
            {"contents": [{"role": "user", "parts": [{"text": "x", "thoughtSig": "a"}]}]},
            "thoughtSig",
            "contents[0].parts[0]",
        ),
        (
            {
                "contents": [USER],
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "f",
                                "parameters": {"type": "object", "additionalProperties": False},
                            }
                        ]
                    }
                ],
            },
            "additionalProperties",
            "tools[0].function_declarations[0].parameters",
        ),
        (
            {"contents": [USER], "generationConfig": {"thinking_config": {"budget": 1}}},
            "budget",
            "generation_config.thinking_config",
        ),
    ],
)
def test_unknown_fields_are_rejected_by_name(
    server: tuple[_Holder, str], body: dict[str, Any], name: str, where: str
) -> None:
    _, _, base_url = install(server)
    reply = post(base_url, body)
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert message.startswith(f'Invalid JSON payload received. Unknown name "{name}"')
    assert f"at '{where}'" in message if where else " at " not in message


def test_malformed_signature_base64_is_rejected(server: tuple[_Holder, str]) -> None:
    _, _, base_url = install(server)
    bad = {"role": "model", "parts": [{"text": "x", "thoughtSignature": "***"}]}
    reply = post(base_url, {"contents": [USER, bad, USER]})
    assert reply.status_code == 400
    assert "Base64 decoding failed" in reply.json()["error"]["message"]


def test_unknown_method_and_bad_json(server: tuple[_Holder, str]) -> None:
    _, _, base_url = install(server)
    assert httpx.post(f"{base_url}/v1beta/models/{MODEL}:embedContent", json={}).status_code == 404
    assert httpx.post(f"{base_url}/v1beta/models/{MODEL}:countTokens", json={}).json()[
        "totalTokens"
    ]
    reply = httpx.post(f"{base_url}/v1beta/models/{MODEL}:generateContent", content=b"{nope")
    assert reply.status_code == 400 and reply.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_script_entries_are_replayed_verbatim_then_the_default_brain_answers(
    server: tuple[_Holder, str],
) -> None:
    scripted = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "scripted"}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "responseId": "s1",
    }
    stream = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "a"}]}, "index": 0}]},
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": "b"}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ]
        },
    ]
    error = {"status": 429, "body": gemini.encode_error(429, "Quota exceeded.")}
    brain = ScriptBrain(
        entries=[
            {"response": scripted},
            {"stream": stream},
            {"error": error},
            {"response": scripted},
        ]
    )
    _, client, base_url = install(server, brain)
    assert post(base_url, {"contents": [USER]}).json() == scripted
    streamed = list(client.models.generate_content_stream(model=MODEL, contents="hi"))
    assert [chunk.text for chunk in streamed] == ["a", "b"]
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents="hi")
    assert caught.value.code == 429
    reply = httpx.post(
        f"{base_url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse", json={"contents": [USER]}
    )
    events = SseParser().feed(reply.content)
    first_chunk = json.loads(events[0].data)
    assert first_chunk["candidates"][0]["content"] == scripted["candidates"][0]["content"]  # type: ignore[index]
    assert client.models.generate_content(model=MODEL, contents="again").text == "You said: again"


def test_codec_encoded_history_is_accepted_or_refused_before_sending(
    server: tuple[_Holder, str],
) -> None:
    """A call from another provider has no Gemini signature: strict refuses, degrade sends the dummy."""
    _, _, base_url = install(server)
    history = Request(
        model=MODEL,
        messages=(
            Message(role="user", parts=(TextPart(text="weather?"),)),
            Message(
                role="assistant",
                parts=(
                    ToolCallPart(call_id="call_x", name="get_weather", arguments='{"city":"Oslo"}'),
                ),
            ),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id="call_x", output=(TextPart(text="cold"),)),),
            ),
        ),
    )
    from interlock.transcript import LossyHistoryError

    with pytest.raises(LossyHistoryError):
        gemini.encode_request(history)
    encoded = gemini.encode_request(history, policy=ReplayPolicy(mode="degrade"))
    reply = post(base_url, encoded.payload)
    assert reply.status_code == 200, reply.text
    assert gemini.decode_response(reply.json()).message.text == "Done: get_weather returned cold"
    base64_form = gemini.encode_request(
        history, policy=ReplayPolicy(mode="degrade"), dummy_signature_form="base64"
    )
    assert post(base_url, base64_form.payload).status_code == 200
