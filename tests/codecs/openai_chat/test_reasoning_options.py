"""OpenRouter's ``reasoning`` / ``include_reasoning`` request settings ⇄ canonical options."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from interlock.codecs import anthropic, gemini
from interlock.codecs.openai_chat import decode_request, encode_request
from interlock.transcript import GenerationOptions, ReplayPolicy

DEGRADE = ReplayPolicy(mode="degrade")
BASE: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

SENT = [
    {"reasoning": {"effort": "high", "exclude": True}},
    {"reasoning": {"max_tokens": 2000}},
    {"reasoning": {"enabled": True}},
    {"reasoning": {"exclude": False, "enabled": True, "max_tokens": 10, "other": 1}},
    {"reasoning": {"max_tokens": "2000"}},
    {"reasoning": {}},
    {"reasoning": None},
    {"reasoning": "high"},
    {"include_reasoning": True},
    {"include_reasoning": False, "reasoning": {"exclude": True}},
    {"reasoning_effort": "low", "reasoning": {"effort": "high"}},
]


@pytest.mark.parametrize("fields", SENT, ids=range(len(SENT)))
@pytest.mark.parametrize("dialect", [None, "openrouter"])
def test_a_same_dialect_round_trip_is_exact(fields: dict[str, Any], dialect: Any) -> None:
    body = {**BASE, **fields}
    encoded = encode_request(decode_request(body), reasoning_dialect=dialect)
    assert encoded.payload == body
    if isinstance(body.get("reasoning"), dict):  # its keys in the order they came
        assert list(encoded.payload["reasoning"]) == list(body["reasoning"])  # type: ignore[arg-type]  # a dict, checked
    assert encoded.warnings == ()


def test_the_settings_are_the_canonical_reasoning_options() -> None:
    options = decode_request(
        {**BASE, "reasoning": {"effort": "high", "max_tokens": 900, "exclude": True}}
    ).options
    assert (options.reasoning_effort, options.thinking_budget, options.include_reasoning) == (
        "high",
        900,
        False,
    )
    assert decode_request({**BASE, "include_reasoning": True}).options.include_reasoning is True


def test_a_top_level_effort_wins_and_the_other_stays_kept() -> None:
    request = decode_request({**BASE, "reasoning_effort": "low", "reasoning": {"effort": "high"}})
    assert request.options.reasoning_effort == "low"
    assert request.extra["openai-chat"]["reasoning"] == {"effort": "high"}


def test_what_has_no_counterpart_stays_kept_for_other_dialects_to_name() -> None:
    request = decode_request({**BASE, "reasoning": {"enabled": True, "max_tokens": 64}})
    assert request.extra["openai-chat"]["reasoning"] == {"enabled": True}
    encoded = gemini.encode_request(request, policy=DEGRADE)
    assert encoded.payload["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 64}}
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("field_dropped", "openai-chat.reasoning")
    ]


def _from_gemini(thinking: dict[str, Any]) -> Any:
    return gemini.decode_request(
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"thinkingConfig": thinking},
        }
    )


def test_an_openrouter_upstream_gets_a_budget_and_exclude_in_reasoning() -> None:
    request = _from_gemini({"thinkingBudget": 2048, "includeThoughts": False})
    encoded = encode_request(request, policy=DEGRADE, reasoning_dialect="openrouter")
    assert encoded.payload["reasoning"] == {"max_tokens": 2048, "exclude": True}
    assert "reasoning_effort" not in encoded.payload
    assert encoded.warnings == ()


def test_with_an_effort_openrouter_takes_the_effort_and_the_budget_is_warned() -> None:
    request = decode_request({**BASE, "reasoning_effort": "low"})
    budgeted = GenerationOptions(reasoning_effort="low", thinking_budget=100)
    encoded = encode_request(
        replace(request, options=budgeted), policy=DEGRADE, reasoning_dialect="openrouter"
    )
    assert encoded.payload["reasoning_effort"] == "low"
    assert "reasoning" not in encoded.payload
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("option_dropped", "options.thinking_budget")
    ]


@pytest.mark.parametrize(
    ("dialect", "sent", "warned"),
    [
        (
            "reasoning_content",
            {"reasoning_effort": "low"},
            [
                ("thinking_budget_as_effort", "options.thinking_budget"),
                ("option_dropped", "options.include_reasoning"),
            ],
        ),
        (
            "reasoning",
            {"reasoning_effort": "low", "include_reasoning": False},
            [("thinking_budget_as_effort", "options.thinking_budget")],
        ),
    ],
)
def test_other_chat_upstreams_get_an_effort_and_a_warning(
    dialect: Any, sent: dict[str, Any], warned: list[tuple[str, str]]
) -> None:
    request = _from_gemini({"thinkingBudget": 2048, "includeThoughts": False})
    encoded = encode_request(request, policy=DEGRADE, reasoning_dialect=dialect)
    assert {k: v for k, v in encoded.payload.items() if k not in ("model", "messages")} == sent
    assert sorted((w.code, w.location) for w in encoded.warnings) == sorted(warned)


def test_an_anthropic_upstream_gets_the_budget_as_thinking() -> None:
    request = decode_request({**BASE, "max_tokens": 4096, "reasoning": {"max_tokens": 2000}})
    encoded = anthropic.encode_request(request, policy=DEGRADE)
    assert encoded.payload["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert encoded.warnings == ()
