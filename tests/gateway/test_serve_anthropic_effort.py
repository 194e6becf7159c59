"""A reasoning effort reaches an Anthropic model the way that model takes it, seen from the
official SDKs through a real ``interlock serve`` (issue 11: effort ↔ thinking budget/level).

The openai SDK (Responses ``reasoning.effort``, Chat ``reasoning_effort``) and google-genai
(``thinkingConfig.thinkingLevel``) send an effort to Anthropic models: one taking
``output_config.effort`` (Claude Opus 4.6: ``low``/``medium``/``high``/``max``, adaptive
thinking), one taking a thinking budget only (Claude Sonnet 4.5), and one whose levels the
config sets (``effort_levels``). The Anthropic emulator checks each body the way the service
does (effort only on a model that takes it, only at its levels, thinking types per model),
so a body in the wrong form is a 400 the test sees. The anthropic SDK's ``output_config``
reaches the Responses, Chat and Gemini upstreams as their effort field. Bad levels get the
client's own 400, and nothing reaches the upstream. Streamed and not, each time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

EXTRA = """
[[upstreams]]
name = "up-claude"
protocol = "anthropic"
base_url = "{emulator_url}/v1"
vendor = "anthropic"

[[upstreams]]
name = "up-anthropic-inside"
protocol = "anthropic"
base_url = "emulator://anthropic"

[[models]]
name = "opus-46"
upstream = "up-claude"
model = "claude-opus-4-6"

[[models]]
name = "opus-46-elsewhere"
upstream = "up-anthropic"
model = "claude-opus-4-6"

[[models]]
name = "sonnet-45"
upstream = "up-claude"
model = "claude-sonnet-4-5"

[[models]]
name = "house"
upstream = "up-claude"
model = "claude-house"
effort_levels = ["high", "low"]

[[models]]
name = "house-inside"
upstream = "up-anthropic-inside"
model = "claude-house"
effort_levels = ["low", "high"]

[[models]]
name = "plain-inside"
upstream = "up-anthropic-inside"
model = "claude-plain"
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("anthropic-effort")
    with emulators_on_loopback() as (emulator_url, emulators):
        config = directory / "interlock.toml"
        store = f"sqlite:///{directory / 'state.db'}"
        extra = EXTRA.replace("{emulator_url}", emulator_url)
        config.write_text(gateway_config(emulator_url, store) + extra)
        with serve(config, directory) as url:
            # The service behind "house" takes the levels its config says (as the gateway's own
            # emulator:// upstream does from the config, tested below through "house-inside").
            service: Any = emulators["anthropic"]
            service.effort_levels["claude-house"] = ("low", "high")
            yield url, emulators


def _openai(url: str) -> OpenAI:
    return OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def _responses(url: str, model: str, stream: bool, **arguments: Any) -> tuple[str, list[str]]:
    """The translation header and the output item types the client read."""
    with _openai(url) as client:
        raw = client.responses.with_raw_response.create(
            model=model, input="hi", stream=stream, **arguments
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return header, [item.type for item in raw.parse().output]
        events = list(raw.parse())  # type: ignore[arg-type]  # stream=True parses to a Stream
    done = [event.response for event in events if event.type == "response.completed"]
    assert len(done) == 1
    return header, [item.type for item in done[0].output]


def _chat(url: str, model: str, stream: bool, **arguments: Any) -> tuple[str, str]:
    """The translation header and the answer text the client read."""
    messages: Any = [{"role": "user", "content": "hi"}]
    with _openai(url) as client:
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, stream=stream, **arguments
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return header, raw.parse().choices[0].message.content or ""
        chunks = list(raw.parse())  # type: ignore[arg-type]  # stream=True parses to a Stream
    return header, "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _gemini(
    url: str, model: str, stream: bool, config: types.GenerateContentConfig
) -> tuple[str, list[bool]]:
    """The translation header and, per answer part, whether it is a thought."""
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    if stream:
        chunks = list(
            client.models.generate_content_stream(model=model, contents="hi", config=config)
        )
    else:
        chunks = [client.models.generate_content(model=model, contents="hi", config=config)]
    first = chunks[0].sdk_http_response
    assert first is not None and first.headers is not None
    parts = [
        bool(part.thought)
        for chunk in chunks
        for candidate in chunk.candidates or []
        for part in (candidate.content.parts if candidate.content else None) or []
    ]
    return first.headers["x-interlock-translation"], parts


def _thinking_level(level: types.ThinkingLevel, **fields: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(thinking_level=level, include_thoughts=True),
        **fields,
    )


def _sent(emulators: dict[str, Emulator], protocol: str = "anthropic") -> dict[str, Any]:
    body = emulators[protocol].received[-1]
    return {key: body.get(key) for key in ("max_tokens", "thinking", "output_config")}


@pytest.mark.parametrize("stream", [False, True])
def test_openai_and_gemini_efforts_reach_an_effort_model_as_output_config(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    header, items = _responses(url, "opus-46", stream, reasoning={"effort": "medium"})
    assert _sent(emulators)["output_config"] == {"effort": "medium"}
    assert _sent(emulators)["thinking"] == {"type": "adaptive"}
    assert "reasoning" in items  # thinking was on: the client reads the model's reasoning
    assert "reasoning_effort" not in header

    header, text = _chat(url, "opus-46", stream, reasoning_effort="high")
    assert (_sent(emulators)["output_config"], text != "") == ({"effort": "high"}, True)

    header, thoughts = _gemini(url, "opus-46", stream, _thinking_level(types.ThinkingLevel.LOW))
    assert _sent(emulators)["output_config"] == {"effort": "low"}
    assert True in thoughts and False in thoughts  # a thought, then the answer


@pytest.mark.parametrize("stream", [False, True])
def test_a_level_the_model_lacks_goes_as_the_nearest_and_is_named(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    header, _ = _chat(url, "opus-46", stream, reasoning_effort="xhigh")
    assert _sent(emulators)["output_config"] == {"effort": "high"}
    assert "reasoning_effort_mapped at options.reasoning_effort" in header
    header, _ = _gemini(url, "opus-46", stream, _thinking_level(types.ThinkingLevel.MINIMAL))
    assert _sent(emulators)["output_config"] == {"effort": "low"}
    assert "reasoning_effort_mapped" in header
    header, _ = _responses(url, "opus-46", stream, reasoning={"effort": "none"})
    assert _sent(emulators)["thinking"] == {"type": "disabled"}
    assert _sent(emulators)["output_config"] is None


@pytest.mark.parametrize("stream", [False, True])
def test_a_budget_only_model_gets_a_thinking_budget_below_the_clients_limit(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    header, items = _responses(url, "sonnet-45", stream, reasoning={"effort": "low"})
    assert _sent(emulators) == {
        "max_tokens": 2048 + 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "output_config": None,
    }
    assert "reasoning_effort_as_budget at options.reasoning_effort" in header
    assert "reasoning" in items

    _chat(url, "sonnet-45", stream, reasoning_effort="high", max_completion_tokens=5000)
    assert _sent(emulators) == {
        "max_tokens": 5000,
        "thinking": {"type": "enabled", "budget_tokens": 5000 - 1024},
        "output_config": None,
    }
    config = _thinking_level(types.ThinkingLevel.MEDIUM, max_output_tokens=1500)
    header, thoughts = _gemini(url, "sonnet-45", stream, config)
    assert _sent(emulators) == {"max_tokens": 1500, "thinking": None, "output_config": None}
    assert "reasoning_effort_dropped at options.reasoning_effort" in header
    assert True not in thoughts


def test_another_vendors_service_gets_a_budget_whatever_the_model_name(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    """An upstream not known to be Anthropic's (here: a host of its own, so its own vendor)
    never gets ``output_config``: the budget form is the one compatible services take."""
    url, emulators = stack
    header, _ = _chat(url, "opus-46-elsewhere", False, reasoning_effort="medium")
    assert _sent(emulators) == {
        "max_tokens": 8192 + 4096,
        "thinking": {"type": "enabled", "budget_tokens": 8192},
        "output_config": None,
    }
    assert "reasoning_effort_as_budget" in header


@pytest.mark.parametrize("stream", [False, True])
def test_the_configured_levels_decide_for_the_model(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    header, _ = _chat(url, "house", stream, reasoning_effort="medium")
    assert _sent(emulators)["output_config"] == {"effort": "low"}  # a tie: the lower level
    assert "reasoning_effort_mapped" in header
    _responses(url, "house", stream, reasoning={"effort": "high"})
    assert _sent(emulators)["output_config"] == {"effort": "high"}
    # The gateway's own emulator:// upstream takes the levels its config gives the model...
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        message = client.messages.create(
            model="house-inside",
            max_tokens=1000,
            messages=[{"role": "user", "content": "hi"}],
            output_config={"effort": "high"},
            stream=stream,
        )
        if stream:
            list(message)  # type: ignore[arg-type]  # stream=True returns a Stream
        # ...and refuses the effort on a model it knows none for, in Anthropic's shape.
        with pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(
                model="plain-inside",
                max_tokens=1000,
                messages=[{"role": "user", "content": "hi"}],
                output_config={"effort": "high"},
            )
    body: Any = refused.value.body
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "This model does not support the effort parameter.",
    }


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_effort_reaches_the_other_upstreams_as_their_effort(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    sent = {
        "via-responses": ("openai-responses", lambda body: body["reasoning"]["effort"]),
        "via-chat": ("openai-chat", lambda body: body["reasoning_effort"]),
        "via-gemini": (
            "gemini",
            lambda body: body["generationConfig"]["thinkingConfig"]["thinkingLevel"],
        ),
    }
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        for model, (protocol, effort_of) in sent.items():
            answer = client.messages.create(
                model=model,
                max_tokens=2000,
                messages=[{"role": "user", "content": "hi"}],
                thinking={"type": "adaptive"},
                output_config={"effort": "high"},
                stream=stream,
            )
            blocks = list(answer) if stream else answer.content  # type: ignore[arg-type]  # a Stream when streamed
            assert blocks
            assert effort_of(emulators[protocol].received[-1]).lower() == "high"


def test_an_anthropic_effort_to_an_anthropic_model_goes_as_it_came(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, emulators = stack
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        client.messages.create(
            model="opus-46",
            max_tokens=2000,
            messages=[{"role": "user", "content": "hi"}],
            thinking={"type": "adaptive"},
            output_config={"effort": "max"},
        )
        assert _sent(emulators) == {
            "max_tokens": 2000,
            "thinking": {"type": "adaptive"},
            "output_config": {"effort": "max"},
        }
        # The service's own refusal of a level the model lacks reaches the client as it is.
        with pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(
                model="house",
                max_tokens=2000,
                messages=[{"role": "user", "content": "hi"}],
                output_config={"effort": "max"},
            )
    body: Any = refused.value.body
    assert "'max' is not supported by this model" in body["error"]["message"]


def test_bad_efforts_get_the_clients_own_400_and_nothing_is_sent(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, emulators = stack
    before = {protocol: len(emulator.received) for protocol, emulator in emulators.items()}
    with _openai(url) as client:
        with pytest.raises(openai.BadRequestError) as responses:
            client.responses.create(
                model="opus-46",
                input="hi",
                reasoning={"effort": "turbo"},  # type: ignore[typeddict-item]  # a bad level
            )
        with pytest.raises(openai.BadRequestError) as chat:
            client.chat.completions.create(
                model="sonnet-45",
                messages=[{"role": "user", "content": "hi"}],
                reasoning_effort="turbo",  # type: ignore[arg-type]  # a bad level
                stream=True,
            )
    for error in (responses.value, chat.value):
        body: Any = error.body
        assert body["code"] == "reasoning_effort_unsupported"
        assert body["param"] == "options.reasoning_effort"
    with (
        anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client,
        pytest.raises(anthropic.BadRequestError) as refused,
    ):
        client.messages.create(
            model="via-responses",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            output_config={"effort": "minimal"},  # type: ignore[typeddict-item]  # bad
        )
    anthropic_body: Any = refused.value.body
    assert anthropic_body["type"] == "error"
    assert anthropic_body["error"]["type"] == "invalid_request_error"
    assert "output_config.effort" in anthropic_body["error"]["message"]
    # google-genai checks the level itself; a raw request carries one it would not send.
    gemini_refused = httpx.post(
        f"{url}/v1beta/models/opus-46:generateContent",
        json={
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"thinkingConfig": {"thinkingLevel": "ULTRA"}},
        },
        timeout=30,
    )
    assert gemini_refused.status_code == 400
    assert gemini_refused.json()["error"]["status"] == "INVALID_ARGUMENT"
    after = {protocol: len(emulator.received) for protocol, emulator in emulators.items()}
    assert after == before
