"""An image URL without a media type, as real clients send it, through a real ``interlock serve``.

ruby_llm's xAI cassettes record a Responses request whose ``input_image`` is
``https://httpbin.org/image/jpeg`` (no extension, no type): only the part type says it is an
image. Translated for a Chat upstream it must arrive as an ``image_url`` (it was refused as
media with no Chat form), and a Chat client's extensionless ``image_url`` must reach a
Responses upstream as an ``input_image`` (it was sent as an ``input_file``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

RECORDED = (
    Path(__file__).resolve().parents[2]
    / "conformance/corpus/payloads/xai"
    / "crmne+ruby_llm__vcr_cassettes__chat_vision_models_xai_grok-4-1-fast-non-reasoning"
    "_can_understand_remote_images_witho.json"
)
IMAGE = "https://httpbin.org/image/jpeg"


def _recorded_input() -> list[Any]:
    """The ``input`` of the recorded xAI request (an ``input_image`` with ``IMAGE``)."""
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    request = next(p["wire"] for p in document["payloads"] if p["kind"] == "request")
    parts = request["input"][0]["content"]
    assert {"type": "input_image", "image_url": IMAGE} in parts
    return request["input"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("vendor-media")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_untyped_input_image_reaches_a_chat_upstream_as_an_image_url(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(
                client.responses.create(model="via-chat", input=_recorded_input(), stream=True)
            )
            response = next(e for e in events if e.type == "response.completed").response
        else:
            response = client.responses.create(model="via-chat", input=_recorded_input())
    assert response.status == "completed"
    assert response.output_text
    sent = emulators["openai-chat"].received[-1]
    content = sent["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": IMAGE}} in content


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_untyped_image_url_reaches_a_responses_upstream_as_an_input_image(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    content: Any = [
        {"type": "text", "text": "What do you see in this image?"},
        {"type": "image_url", "image_url": {"url": IMAGE}},
    ]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        messages: Any = [{"role": "user", "content": content}]
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="via-responses", messages=messages, stream=True
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            answer = client.chat.completions.create(model="via-responses", messages=messages)
            text = answer.choices[0].message.content or ""
    assert text
    sent = emulators["openai-responses"].received[-1]
    parts = sent["input"][-1]["content"]
    assert [part["type"] for part in parts] == ["input_text", "input_image"]
    assert parts[1]["image_url"] == IMAGE
