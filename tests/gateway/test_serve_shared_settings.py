"""Shared generation settings through a real ``interlock serve`` and the official SDKs.

``top_k``, the presence / frequency penalties, the end-user id and OpenAI's ``metadata``
reach every upstream dialect with a field for them (Anthropic's ``metadata.user_id`` is the
user); where the target has none, the answer's translation label names the setting. The
emulators check each field the way the real services type it, so a wrong shape fails here.
Streamed and non-streamed calls send the same body.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

MESSAGES: Any = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    with serve_on_emulators(tmp_path_factory.mktemp("settings")) as (url, emulators):
        yield url, emulators


def _chat(url: str, model: str, stream: bool) -> str:
    """A Chat client's call with a user, metadata and both penalties; its translation label."""
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        settings: Any = {
            "model": model,
            "messages": MESSAGES,
            "user": "u-7",
            "metadata": {"team": "a"},
            "presence_penalty": 0.25,
            "frequency_penalty": 0.5,
            "store": True,
        }
        if not stream:
            raw = client.chat.completions.with_raw_response.create(**settings)
            raw.parse()
            return raw.headers["x-interlock-translation"]
        chunks = list(client.chat.completions.create(**settings, stream=True))
        extra = chunks[-1].model_extra or {}
        for chunk in reversed(chunks):
            if chunk.model_extra and "interlock" in chunk.model_extra:
                extra = chunk.model_extra
                break
        return str(extra.get("interlock", {}).get("translation", "translated"))


CHAT_ARRIVALS: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "via-gemini": (
        "gemini",
        {"generationConfig.presencePenalty": 0.25, "generationConfig.frequencyPenalty": 0.5},
        ("options.user", "options.metadata"),
    ),
    "via-responses": (
        "openai-responses",
        {"user": "u-7", "metadata": {"team": "a"}},
        ("options.presence_penalty", "options.frequency_penalty"),
    ),
    "via-anthropic": (
        "anthropic",
        {"metadata": {"user_id": "u-7"}},
        ("options.metadata", "options.presence_penalty"),
    ),
}
"""Model: the upstream, what it must receive (dotted path: value), what the label names."""


def _at(body: Any, path: str) -> Any:
    for key in path.split("."):
        body = body[key]
    return body


@pytest.mark.parametrize("model", sorted(CHAT_ARRIVALS))
@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_clients_settings_arrive_or_are_named(
    stack: tuple[str, dict[str, Emulator]], model: str, stream: bool
) -> None:
    url, emulators = stack
    label = _chat(url, model, stream)
    upstream, arrivals, named = CHAT_ARRIVALS[model]
    body = emulators[upstream].received[-1]
    assert {path: _at(body, path) for path in arrivals} == arrivals
    assert all(location in label for location in named), label


@pytest.mark.parametrize("stream", [False, True])
def test_a_gemini_clients_top_k_and_penalties_travel(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    config = types.GenerateContentConfig(top_k=20.0, presence_penalty=0.5, frequency_penalty=0.25)
    for model, upstream in (("via-anthropic", "anthropic"), ("via-chat", "openai-chat")):
        if stream:
            list(client.models.generate_content_stream(model=model, contents="hi", config=config))
        else:
            client.models.generate_content(model=model, contents="hi", config=config)
        body = emulators[upstream].received[-1]
        if upstream == "anthropic":
            assert body["top_k"] == 20 and "presence_penalty" not in body
        else:
            assert (body["presence_penalty"], body["frequency_penalty"]) == (0.5, 0.25)
            assert "top_k" not in body


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_clients_user_and_top_k_travel(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        settings: Any = {
            "model": "via-chat",
            "max_tokens": 64,
            "messages": MESSAGES,
            "metadata": {"user_id": "u-9"},
            "extra_body": {"top_k": 4},  # the 1.x SDK's signature no longer names it
        }
        if stream:
            with client.messages.stream(**settings) as events:
                events.get_final_message()
        else:
            client.messages.create(**settings)
    chat = emulators["openai-chat"].received[-1]
    assert chat["user"] == "u-9" and "top_k" not in chat
