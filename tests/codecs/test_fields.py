"""Settings a dialect decoded but another cannot send: translated or warned, never silent."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.codecs._fields import effort_for_budget, foreign_field_warnings
from interlock.transcript import GenerationOptions, Request

CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "n": 2,
    "logprobs": True,
    "user": "u-1",
    "frequency_penalty": 0.5,
    "stream_options": {"include_usage": True},
}
GEMINI = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    "generationConfig": {"candidateCount": 2, "topK": 3},
}
RESPONSES = {"model": "m", "input": "hi", "metadata": {"k": "v"}, "truncation": "auto"}
ANTHROPIC = {
    "model": "m",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "metadata": {"user_id": "u-1"},
    "top_k": 3,
}

ENCODERS: dict[str, Any] = {
    "openai-chat": openai_chat.encode_request,
    "openai-responses": openai_responses.encode_request,
    "gemini": gemini.encode_request,
    "anthropic": anthropic.encode_request,
}


def _request(dialect: str) -> Request:
    if dialect == "openai-chat":
        return openai_chat.decode_request(CHAT)
    if dialect == "gemini":
        return gemini.decode_request(GEMINI, model="m")
    if dialect == "anthropic":
        return anthropic.decode_request(ANTHROPIC)
    return openai_responses.decode_request(RESPONSES)


@pytest.mark.parametrize("source", sorted(ENCODERS))
@pytest.mark.parametrize("target", sorted(ENCODERS))
def test_every_kept_field_is_warned_by_every_other_encoder(source: str, target: str) -> None:
    encoded = ENCODERS[target](_request(source))
    # Anthropic's encoder says ``setting_dropped`` (its code before the shared one existed).
    code = "setting_dropped" if target == "anthropic" else "field_dropped"
    dropped = sorted(w.location for w in encoded.warnings if w.code == code)
    expected = {
        "openai-chat": [
            "openai-chat.frequency_penalty",
            "openai-chat.logprobs",
            "openai-chat.n",
            "openai-chat.user",
        ],
        "gemini": [
            "gemini.generationConfig.candidateCount",
            "gemini.generationConfig.topK",
            "gemini.safetySettings",
        ],
        "openai-responses": ["openai-responses.metadata", "openai-responses.truncation"],
        "anthropic": ["anthropic.metadata", "anthropic.top_k"],
    }
    assert dropped == ([] if source == target else expected[source])


def test_transport_fields_and_the_gateways_include_are_not_settings() -> None:
    request = openai_responses.decode_request(
        {"model": "m", "input": "hi", "include": ["reasoning.encrypted_content"], "stream": False}
    )
    assert foreign_field_warnings(request.extra, "gemini") == []


@pytest.mark.parametrize(
    ("budget", "effort"),
    [(-1, None), (0, "minimal"), (1024, "low"), (8192, "medium"), (24576, "high")],
)
def test_thinking_budget_maps_to_the_nearest_effort(budget: int, effort: str | None) -> None:
    assert effort_for_budget(budget) == effort


def test_openai_targets_send_a_thinking_budget_as_effort_and_say_so() -> None:
    request = gemini.decode_request(
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {
                "thinkingConfig": {"thinkingBudget": 1024},
                "stopSequences": ["x"],
            },
        },
        model="m",
    )
    responses = openai_responses.encode_request(request)
    assert responses.payload["reasoning"] == {"effort": "low"}
    assert {w.code for w in responses.warnings} == {"thinking_budget_as_effort", "option_dropped"}
    assert [w.location for w in responses.warnings if w.code == "option_dropped"] == [
        "options.stop"
    ]
    chat = openai_chat.encode_request(request)
    assert chat.payload["reasoning_effort"] == "low" and chat.payload["stop"] == ["x"]
    assert [w.code for w in chat.warnings] == ["thinking_budget_as_effort"]


def test_responses_has_no_seed_and_says_so() -> None:
    request = Request(model="m", messages=(), options=GenerationOptions(seed=3))
    encoded = openai_responses.encode_request(request)
    assert "seed" not in encoded.payload
    assert [(w.code, w.location) for w in encoded.warnings] == [("option_dropped", "options.seed")]
