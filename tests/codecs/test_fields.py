"""Settings a dialect decoded but another cannot send: translated or warned, never silent."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.codecs._fields import effort_for_budget, foreign_field_warnings
from interlock.transcript import GenerationOptions, LossyHistoryError, ReplayPolicy, Request

CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "n": 1,
    "logprobs": True,
    "user": "u-1",
    "frequency_penalty": 0.5,
    "stream_options": {"include_usage": True},
}
GEMINI = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    "generationConfig": {"candidateCount": 1, "topK": 3},
}
RESPONSES = {"model": "m", "input": "hi", "metadata": {"k": "v"}, "truncation": "auto"}
ANTHROPIC = {
    "model": "m",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "top_k": 5,
    "metadata": {"user_id": "u-2"},
    "service_tier": "auto",
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


def _at(payload: dict[str, Any], path: str) -> Any:
    value: Any = payload
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


_ARRIVES: dict[tuple[str, str], dict[str, Any]] = {
    ("openai-chat", "gemini"): {
        "generationConfig.frequencyPenalty": 0.5,
        "generationConfig.responseLogprobs": True,
        "generationConfig.candidateCount": 1,
    },
    ("openai-chat", "openai-responses"): {
        "user": "u-1",
        "include": ["message.output_text.logprobs"],
    },
    ("gemini", "openai-chat"): {"n": 1},
    ("openai-chat", "anthropic"): {"metadata": {"user_id": "u-1"}},
    ("gemini", "anthropic"): {"top_k": 3},
    ("openai-responses", "openai-chat"): {"metadata": {"k": "v"}},
    ("anthropic", "openai-chat"): {"user": "u-2"},
    ("anthropic", "openai-responses"): {"user": "u-2"},
    ("anthropic", "gemini"): {"generationConfig.topK": 5},
}
"""What each source's shared settings become on each target's wire."""

_OPTIONS: dict[str, set[str]] = {
    "openai-chat": {"user", "frequency_penalty", "candidate_count", "logprobs"},
    "gemini": {"top_k", "candidate_count"},
    "openai-responses": {"metadata"},
    "anthropic": {"top_k", "user"},
}
_ANSWER_OPTIONS = {"candidate_count", "logprobs", "top_logprobs"}
_CARRIES: dict[str, set[str]] = {
    "openai-chat": {"user", "frequency_penalty", "metadata", *_ANSWER_OPTIONS},
    "gemini": {"frequency_penalty", "top_k", *_ANSWER_OPTIONS},
    "openai-responses": {"user", "metadata", "logprobs", "top_logprobs"},
    "anthropic": {"top_k", "user"},
}
_KEPT: dict[str, list[str]] = {
    "openai-chat": [],
    "gemini": ["gemini.safetySettings"],
    "openai-responses": ["openai-responses.truncation"],
    "anthropic": ["anthropic.service_tier"],
}


@pytest.mark.parametrize("source", sorted(ENCODERS))
@pytest.mark.parametrize("target", sorted(ENCODERS))
def test_every_shared_setting_arrives_or_is_warned(source: str, target: str) -> None:
    """A shared option reaches every target with a field for it and is named where it cannot
    go; a field only its own dialect has is a ``field_dropped`` warning elsewhere."""
    encoded = ENCODERS[target](_request(source))
    warned = sorted(
        w.location.removeprefix("options.") for w in encoded.warnings if w.code == "option_dropped"
    )
    dropped = " ".join(
        w.location for w in encoded.warnings if w.code in ("field_dropped", "setting_dropped")
    )
    if source == target:
        assert (warned, dropped) == ([], "")
        return
    assert warned == sorted(_OPTIONS[source] - _CARRIES[target])
    for name in _KEPT[source]:
        assert name in dropped, name
    for path, value in _ARRIVES.get((source, target), {}).items():
        assert _at(encoded.payload, path) == value, path


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


@pytest.mark.parametrize("target", ["openai-responses", "anthropic"])
def test_several_candidates_to_a_one_candidate_dialect_are_refused_under_strict(
    target: str,
) -> None:
    """Responses and Anthropic answer one candidate: asking them for two would silently give
    the client fewer than it asked for. Strict refuses, degrade sends one and says so."""
    request = openai_chat.decode_request({**CHAT, "n": 2})
    with pytest.raises(LossyHistoryError) as raised:
        ENCODERS[target](request)
    assert (raised.value.code, raised.value.location) == (
        "candidates_unsupported",
        "options.candidate_count",
    )
    encoded = ENCODERS[target](request, policy=ReplayPolicy(mode="degrade"))
    assert [w.code for w in encoded.warnings if w.location == "options.candidate_count"] == [
        "option_dropped"
    ]
