"""OpenRouter's reasoning settings cross dialects through a real ``interlock serve`` (issue 11).

A Chat client's ``reasoning`` object (OpenRouter's: ``effort``, ``max_tokens``, ``exclude``)
and ``include_reasoning`` are the canonical reasoning options: a Gemini upstream gets a
``thinkingConfig``, a Responses upstream ``reasoning.effort``; what has no
counterpart (``enabled``) is a warning the client reads. (A Chat upstream gets a Chat client's
body as it came: the same dialect is passed through.) The other way, a Gemini client's
thinking budget reaches an OpenRouter upstream as ``reasoning.max_tokens``. The emulators
record the bodies they received; streamed and not alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

OPENROUTER = """
[[upstreams]]
name = "up-openrouter"
protocol = "openai-chat"
base_url = "{url}/v1"
reasoning_dialect = "openrouter"

[[models]]
name = "via-openrouter"
upstream = "up-openrouter"
model = "google/gemini-2.5-flash"
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    """The gateway on the four emulators, plus an OpenRouter upstream (the emulated Chat
    service)."""
    directory = tmp_path_factory.mktemp("openrouter-reasoning")
    with emulators_on_loopback() as (emulator_url, emulators):
        config = directory / "interlock.toml"
        store = f"sqlite:///{directory / 'state.db'}"
        extra = OPENROUTER.format(url=emulator_url)
        config.write_text(gateway_config(emulator_url, store) + extra)
        with serve(config, directory) as url:
            yield url, emulators


def _chat(url: str, model: str, stream: bool, extra_body: dict[str, Any]) -> Any:
    """The completion (or its chunks' ``interlock``) and the ``interlock`` member."""
    messages: Any = [{"role": "user", "content": "2 + 2?"}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            answer = client.chat.completions.create(
                model=model, messages=messages, extra_body=extra_body
            )
            assert answer.choices[0].message.content
            return (answer.model_extra or {}).get("interlock")
        chunks = list(
            client.chat.completions.create(
                model=model, messages=messages, stream=True, extra_body=extra_body
            )
        )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    said = [(c.model_extra or {}).get("interlock") for c in chunks]
    return next((field for field in said if field is not None), None)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_clients_budget_and_exclude_reach_gemini_as_its_thinking_config(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    settings = {"reasoning": {"max_tokens": 1024, "exclude": True}}
    said = _chat(url, "via-gemini", stream, settings)
    config = emulators["gemini"].received[-1]["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 1024, "includeThoughts": False}
    assert said is None  # carried: nothing to warn about


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_clients_effort_reaches_a_responses_upstream(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    said = _chat(url, "via-responses", stream, {"reasoning": {"effort": "high"}})
    received = emulators["openai-responses"].received[-1]
    assert received["reasoning"] == {"effort": "high"}
    assert said is None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_setting_with_no_counterpart_is_a_warning_the_client_reads(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    said = _chat(url, "via-gemini", stream, {"reasoning": {"enabled": True, "effort": "low"}})
    config = emulators["gemini"].received[-1]["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingLevel": "LOW"}
    assert said is not None
    codes = [(w["code"], w["location"]) for w in said["warnings"]]
    assert codes == [("field_dropped", "openai-chat.reasoning")]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_gemini_clients_thinking_budget_reaches_openrouter_as_reasoning(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    thinking = types.ThinkingConfig(thinking_budget=2048, include_thoughts=False)
    config = types.GenerateContentConfig(thinking_config=thinking)
    asked: Any = {"model": "via-openrouter", "contents": "2 + 2?", "config": config}
    if stream:
        chunks = list(client.models.generate_content_stream(**asked))
        assert "".join(chunk.text or "" for chunk in chunks)
        status = chunks[-1].model_status
    else:
        answer = client.models.generate_content(**asked)
        assert answer.text
        status = answer.model_status
    received = emulators["openai-chat"].received[-1]
    assert received["reasoning"] == {"max_tokens": 2048, "exclude": True}
    assert "reasoning_effort" not in received
    assert status is None or status.message is None  # carried: nothing to warn about


def test_a_chat_clients_reasoning_object_reaches_openrouter_as_sent(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, emulators = stack
    settings = {"reasoning": {"exclude": False, "max_tokens": 512, "enabled": True}}
    assert _chat(url, "via-openrouter", False, settings) is None
    assert emulators["openai-chat"].received[-1]["reasoning"] == settings["reasoning"]
