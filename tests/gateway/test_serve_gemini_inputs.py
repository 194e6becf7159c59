"""Gemini-client input other providers need put right, through ``interlock serve``.

Media another provider cannot use, from a google-genai client:

A ``fileData.fileUri`` naming a ``gs://`` object or a Gemini Files API file reaches only
Gemini; sent to another provider it is refused before anything is sent (strict, the
default) or dropped with ``media_unreachable`` in the translation header (a model with
``replay_mode = "degrade"``). Video goes to no Anthropic model (Anthropic has no video
input; it used to leave as a ``document`` block): ``media_unsupported`` likewise.
Whole and streamed answers agree.

A call Vertex streamed in fragments (``partialArgs``), kept in history the way a client
appends streamed chunks (one model content per chunk), reaches a Chat or Responses
upstream as one whole call. (google-genai refuses to send ``partial_args`` outside Vertex
mode, so this body is posted as JSON.)
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

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

GS = "gs://cloud-samples-data/video/animals.mp4"
FILES_API = "https://generativelanguage.googleapis.com/v1beta/files/abc123"

DEGRADE_MODELS = """
[[models]]
name = "chat-degrade"
upstream = "up-chat"
model = "chat-emulated"
replay_mode = "degrade"

[[models]]
name = "responses-degrade"
upstream = "up-responses"
model = "gpt-5-emulated"
replay_mode = "degrade"

[[models]]
name = "anthropic-degrade"
upstream = "up-anthropic"
model = "claude-emulated"
replay_mode = "degrade"
"""
STRICT = {
    "openai-chat": "via-chat",
    "openai-responses": "via-responses",
    "anthropic": "via-anthropic",
}
DEGRADE = {
    "openai-chat": "chat-degrade",
    "openai-responses": "responses-degrade",
    "anthropic": "anthropic-degrade",
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("media-reach")
    with serve_on_emulators(directory, DEGRADE_MODELS) as (url, emulators):
        yield url, emulators


def _ask(url: str, model: str, media: types.Part, stream: bool) -> tuple[str, str]:
    """The answer's text and its ``x-interlock-translation`` header."""
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    contents: Any = [types.Content(role="user", parts=[types.Part(text="What is in it?"), media])]
    if not stream:
        answer = client.models.generate_content(model=model, contents=contents)
        chunks = [answer]
    else:
        chunks = list(client.models.generate_content_stream(model=model, contents=contents))
    text = "".join(chunk.text or "" for chunk in chunks)
    head = chunks[0].sdk_http_response
    headers = head.headers if head is not None and head.headers is not None else {}
    return text, headers.get("x-interlock-translation", "")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("uri", [GS, FILES_API], ids=["gs", "files-api"])
@pytest.mark.parametrize("upstream", list(STRICT))
def test_a_google_only_file_is_refused_before_sending_or_dropped_with_a_warning(
    stack: tuple[str, dict[str, Emulator]], upstream: str, uri: str, stream: bool
) -> None:
    url, emulators = stack
    emulator = emulators[upstream]
    media = types.Part.from_uri(file_uri=uri, mime_type="image/png")
    before = len(emulator.received)
    with pytest.raises(genai_errors.ClientError) as refused:
        _ask(url, STRICT[upstream], media, stream)
    assert refused.value.code == 400
    assert "only Gemini can fetch it" in str(refused.value)
    assert len(emulator.received) == before, "a refused request reached the upstream"
    text, label = _ask(url, DEGRADE[upstream], media, stream)
    assert "What is in it?" in text
    assert label.startswith("degraded") and "media_unreachable" in label
    assert uri not in str(emulator.received[-1])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("media", ["inline", "uri"])
def test_video_never_reaches_anthropic_as_a_document(
    stack: tuple[str, dict[str, Emulator]], media: str, stream: bool
) -> None:
    url, emulators = stack
    emulator = emulators["anthropic"]
    video = (
        types.Part.from_bytes(data=b"\x00\x00\x00\x18ftypmp42", mime_type="video/mp4")
        if media == "inline"
        else types.Part.from_uri(file_uri="https://example.com/clip.mp4", mime_type="video/mp4")
    )
    before = len(emulator.received)
    with pytest.raises(genai_errors.ClientError) as refused:
        _ask(url, "via-anthropic", video, stream)
    assert refused.value.code == 400 and "Anthropic has no video input" in str(refused.value)
    assert len(emulator.received) == before
    text, label = _ask(url, "anthropic-degrade", video, stream)
    assert "What is in it?" in text and "media_unsupported" in label
    assert "document" not in str(emulator.received[-1])


FRAGMENTS: list[Any] = [
    {"functionCall": {"id": "fc_9", "name": "get_weather", "willContinue": True}},
    {
        "functionCall": {
            "partialArgs": [{"jsonPath": "$.city", "stringValue": "San ", "willContinue": True}],
            "willContinue": True,
        }
    },
    {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Francisco"}]}},
    {"functionCall": {}},
]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("upstream", ["openai-chat", "openai-responses"])
def test_a_call_streamed_in_fragments_goes_back_whole(
    stack: tuple[str, dict[str, Emulator]], upstream: str, stream: bool
) -> None:
    url, emulators = stack
    result = {"functionResponse": {"id": "fc_9", "name": "get_weather", "response": {"r": 1}}}
    body: Any = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather in San Francisco?"}]},
            *({"role": "model", "parts": [fragment]} for fragment in FRAGMENTS),
            {"role": "user", "parts": [result]},
        ],
        "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
    }
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    answer = httpx.post(f"{url}/v1beta/models/{STRICT[upstream]}:{method}", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    assert "returned" in answer.text
    sent = emulators[upstream].received[-1]
    if upstream == "openai-chat":
        (call,) = sent["messages"][1]["tool_calls"]
        arguments, call_id = call["function"]["arguments"], call["id"]
    else:
        (call,) = [item for item in sent["input"] if item.get("type") == "function_call"]
        arguments, call_id = call["arguments"], call["call_id"]
    assert (json.loads(arguments), call_id) == ({"city": "San Francisco"}, "fc_9")
