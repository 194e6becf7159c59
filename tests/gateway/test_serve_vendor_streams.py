"""Vendor stream variants recorded from real services, through a real ``interlock serve``.

Groq sends a stream's usage only in ``x_groq.usage`` of its last chunk (no standard
``usage`` chunk). The emulated Chat upstream replays a Groq stream recorded in the corpus
(``conformance/corpus/payloads/groq``) event for event; a Responses client and a Gemini
client behind the gateway must get its token counts, streaming and not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from interlock.emulators._brain import ScriptBrain
from interlock.emulators.openai_chat import OpenAIChatEmulator
from tests.gateway.serving import serve_on_emulators

RECORDED = (
    Path(__file__).resolve().parents[2]
    / "conformance/corpus/payloads/groq"
    / "traceloop+openllmetry__test_chat_tracing__test_chat_streaming_legacy.json"
)


def _groq_stream() -> tuple[list[Any], dict[str, Any]]:
    """The recorded stream's event data and the usage its last chunk carries in ``x_groq``."""
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    wire = next(p["wire"] for p in document["payloads"] if p["kind"] == "stream")
    data = [event["data"] for event in wire]
    usage = next(
        d["x_groq"]["usage"] for d in data if isinstance(d, dict) and "usage" in d.get("x_groq", {})
    )
    assert not any(isinstance(d, dict) and d.get("usage") for d in data)
    return data, usage


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("vendor-streams")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def _replay_groq(emulators: dict[str, Emulator]) -> dict[str, Any]:
    data, usage = _groq_stream()
    emulator = emulators["openai-chat"]
    assert isinstance(emulator, OpenAIChatEmulator)
    emulator.brain = ScriptBrain(entries=[{"stream": data}])
    return usage


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_groq_usage_in_x_groq_reaches_a_responses_client(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    usage = _replay_groq(emulators)
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(client.responses.create(model="via-chat", input="a joke", stream=True))
            response = next(e for e in events if e.type == "response.completed").response
        else:
            response = client.responses.create(model="via-chat", input="a joke")
    assert response.output_text.startswith("A joke about OpenTelemetry")
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_groq_usage_in_x_groq_reaches_a_gemini_client(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    usage = _replay_groq(emulators)
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    if stream:
        chunks = list(client.models.generate_content_stream(model="via-chat", contents="a joke"))
        metadata = [chunk.usage_metadata for chunk in chunks if chunk.usage_metadata]
        assert metadata, "no chunk carried usageMetadata"
        last = metadata[-1]
    else:
        answer = client.models.generate_content(model="via-chat", contents="a joke")
        assert answer.usage_metadata is not None
        last = answer.usage_metadata
    assert (last.prompt_token_count, last.candidates_token_count) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
