"""Reasoning effort ⇄ Anthropic: per-model levels, budgets, mapping, refusal, emulator rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.codecs._fields import effort_for_budget
from interlock.codecs.anthropic._effort import BUDGETS, effort_support, effort_violation
from interlock.emulators.anthropic import AnthropicEmulator
from interlock.transcript import (
    DecodeError,
    GenerationOptions,
    JsonObject,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolChoice,
    ToolSpec,
)
from tests.codecs.anthropic.wire_fixtures import assert_valid_request


def _request(model: str, **options: object) -> Request:
    choice = options.pop("tool_choice", None)
    return Request(
        model=model,
        messages=(Message(role="user", parts=(TextPart(text="Hi"),)),),
        tools=(ToolSpec(name="f"),) if choice else (),
        tool_choice=choice if isinstance(choice, ToolChoice) else None,
        options=GenerationOptions(**options),  # type: ignore[arg-type]  # test keywords
    )


def _encode(model: str, policy: ReplayPolicy | None = None, **options: object) -> JsonObject:
    encoded = anthropic.encode_request(_request(model, **options), policy=policy or ReplayPolicy())
    assert_valid_request(encoded.payload)
    return {
        "thinking": encoded.payload.get("thinking"),
        "effort": (encoded.payload.get("output_config") or {}).get("effort"),
        "max_tokens": encoded.payload["max_tokens"],
        "warnings": [warning.code for warning in encoded.warnings],
    }


@pytest.mark.parametrize(
    ("model", "levels", "adaptive", "budget"),
    [
        ("claude-opus-4-5-20251101", ("low", "medium", "high"), False, True),
        ("claude-opus-4-6", ("low", "medium", "high", "max"), True, True),
        ("claude-sonnet-4-6", ("low", "medium", "high", "max"), True, True),
        ("claude-mythos-preview", ("low", "medium", "high", "max"), True, False),
        ("claude-opus-4-7", ("low", "medium", "high", "xhigh", "max"), True, False),
        ("claude-sonnet-5", ("low", "medium", "high", "xhigh", "max"), True, False),
        ("claude-opus-5-5", ("low", "medium", "high", "xhigh", "max"), True, False),
        ("claude-haiku-5-5", ("low", "medium", "high", "xhigh", "max"), True, False),
        ("claude-sonnet-4-5-20250929", (), False, True),
        ("claude-haiku-4-5", (), False, True),
        ("claude-opus-4-1-20250805", (), False, True),
        ("claude-3-7-sonnet-20250219", (), False, True),
        ("claude-3-5-haiku-20241022", (), False, False),
        ("us.anthropic.claude-opus-4-6-v1", ("low", "medium", "high", "max"), True, True),
        ("claude-opus-4-6@20260205", ("low", "medium", "high", "max"), True, True),
        ("my-claude-alias", (), False, True),
    ],
)
def test_the_table_reads_the_model_name(
    model: str, levels: tuple[str, ...], adaptive: bool, budget: bool
) -> None:
    support = effort_support(model)
    assert (support.levels, support.adaptive, support.budget) == (levels, adaptive, budget)


def test_another_vendor_and_an_override_decide_before_the_name() -> None:
    assert effort_support("claude-opus-4-6", "deepseek").levels == ()
    assert effort_support("claude-opus-4-6", "deepseek").budget
    assert effort_support("claude-sonnet-4-5", levels=("low", "high")).levels == ("low", "high")
    assert effort_support("claude-opus-4-6", levels=()).levels == ()
    assert effort_support("claude-opus-4-7", levels=()).budget  # configured: budget-only
    custom = effort_support("house-model", levels=("low", "max"))
    assert (custom.levels, custom.adaptive) == (("low", "max"), True)


def test_an_effort_model_gets_output_config_effort_and_adaptive_thinking() -> None:
    assert _encode("claude-opus-4-6", reasoning_effort="high") == {
        "thinking": {"type": "adaptive"},
        "effort": "high",
        "max_tokens": 4096,
        "warnings": [],
    }
    opus_45 = _encode("claude-opus-4-5-20251101", reasoning_effort="low")
    assert (opus_45["thinking"], opus_45["effort"], opus_45["warnings"]) == (None, "low", [])


@pytest.mark.parametrize(
    ("model", "asked", "sent"),
    [
        ("claude-opus-4-6", "xhigh", "high"),  # a tie goes to the lower level
        ("claude-opus-4-6", "minimal", "low"),
        ("claude-opus-4-5", "max", "high"),
        ("claude-opus-4-5", "xhigh", "high"),
        ("claude-opus-4-7", "minimal", "low"),
    ],
)
def test_a_level_the_model_lacks_goes_as_the_nearest_with_a_warning(
    model: str, asked: str, sent: str
) -> None:
    encoded = _encode(model, reasoning_effort=asked)
    assert (encoded["effort"], encoded["warnings"]) == (sent, ["reasoning_effort_mapped"])


def test_none_turns_thinking_off_or_goes_as_the_lowest_level() -> None:
    off = _encode("claude-opus-4-6", reasoning_effort="none")
    assert (off["thinking"], off["effort"], off["warnings"]) == ({"type": "disabled"}, None, [])
    budget_model = _encode("claude-sonnet-4-5", reasoning_effort="none")
    assert (budget_model["thinking"], budget_model["warnings"]) == ({"type": "disabled"}, [])
    for model in ("claude-opus-5", "claude-haiku-5-5"):
        assert _encode(model, reasoning_effort="none")["thinking"] == {"type": "disabled"}
    always_on = _encode("claude-opus-4-7", reasoning_effort="none")
    assert (always_on["thinking"], always_on["effort"]) == (None, "low")
    assert always_on["warnings"] == ["reasoning_effort_mapped"]


def test_a_budget_only_model_gets_a_budget_that_maps_back_to_the_effort() -> None:
    for effort in ("low", "medium", "high"):
        encoded = _encode("claude-sonnet-4-5", reasoning_effort=effort)
        budget = BUDGETS[effort]
        assert encoded["thinking"] == {"type": "enabled", "budget_tokens": budget}
        assert encoded["max_tokens"] == budget + 4096  # no client limit: room to answer
        assert encoded["warnings"] == ["reasoning_effort_as_budget"]
        assert effort_for_budget(budget) == effort


def test_a_budget_stays_below_the_clients_max_tokens_with_room_to_answer() -> None:
    fitted = _encode("claude-sonnet-4-5", reasoning_effort="high", max_output_tokens=5000)
    assert fitted["thinking"] == {"type": "enabled", "budget_tokens": 5000 - 1024}
    assert fitted["max_tokens"] == 5000
    tight = _encode("claude-sonnet-4-5", reasoning_effort="high", max_output_tokens=2000)
    assert (tight["thinking"], tight["max_tokens"]) == (None, 2000)
    assert tight["warnings"] == ["reasoning_effort_dropped"]


def test_a_forced_tool_keeps_thinking_off() -> None:
    forced = ToolChoice(mode="required", names=("f",))
    budget_model = _encode("claude-sonnet-4-5", reasoning_effort="high", tool_choice=forced)
    assert (budget_model["thinking"], budget_model["warnings"]) == (
        None,
        ["reasoning_effort_dropped"],
    )
    effort_model = _encode("claude-opus-4-6", reasoning_effort="high", tool_choice=forced)
    assert (effort_model["thinking"], effort_model["effort"]) == (None, "high")


def test_a_model_without_thinking_is_told_so() -> None:
    encoded = _encode("claude-3-5-haiku-20241022", reasoning_effort="high")
    assert (encoded["thinking"], encoded["warnings"]) == (None, ["reasoning_effort_ignored"])


def test_an_unknown_level_is_refused_under_strict_and_dropped_under_degrade() -> None:
    with pytest.raises(LossyHistoryError) as refused:
        anthropic.encode_request(_request("claude-opus-4-6", reasoning_effort="turbo"))
    assert (refused.value.code, refused.value.location) == (
        "reasoning_effort_unsupported",
        "options.reasoning_effort",
    )
    dropped = _encode("claude-opus-4-6", ReplayPolicy(mode="degrade"), reasoning_effort="turbo")
    assert (dropped["effort"], dropped["warnings"]) == (None, ["reasoning_effort_dropped"])


def test_the_configured_levels_win_over_the_name() -> None:
    policy = ReplayPolicy(effort_levels=())
    as_budget = _encode("claude-opus-4-6", policy, reasoning_effort="medium")
    assert as_budget["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert as_budget["effort"] is None
    policy = ReplayPolicy(effort_levels=("low", "medium", "high"))
    taken = _encode("claude-sonnet-4-5", policy, reasoning_effort="max")
    assert (taken["effort"], taken["warnings"]) == ("high", ["reasoning_effort_mapped"])


def test_another_vendor_never_gets_output_config() -> None:
    request = _request("claude-opus-4-6", reasoning_effort="low")
    payload = anthropic.wire_codec(issuer="deepseek").encode(request, ReplayPolicy()).payload
    assert "output_config" not in payload
    assert payload["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_a_budget_for_a_model_without_budgets_becomes_adaptive_at_its_effort() -> None:
    encoded = _encode("claude-opus-4-7", thinking_budget=5000)
    assert (encoded["thinking"], encoded["effort"]) == ({"type": "adaptive"}, "medium")
    assert encoded["warnings"] == ["thinking_budget_as_effort"]
    dynamic = _encode("claude-opus-4-7", thinking_budget=-1)
    assert (dynamic["thinking"], dynamic["effort"]) == ({"type": "adaptive"}, None)
    assert dynamic["warnings"] == ["thinking_budget_as_adaptive"]


def test_each_client_dialects_effort_reaches_anthropic() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    decoded = [
        openai_responses.decode_request(
            {"model": "claude-opus-4-6", "input": "Hi", "reasoning": {"effort": "low"}}
        ),
        openai_chat.decode_request(
            {"model": "claude-opus-4-6", "messages": messages, "reasoning_effort": "low"}
        ),
        gemini.decode_request(
            {
                "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
                "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}},
            },
            model="claude-opus-4-6",
        ),
    ]
    for request in decoded:
        payload = anthropic.encode_request(request).payload
        assert payload["output_config"] == {"effort": "low"}
        assert payload["thinking"] == {"type": "adaptive"}


def test_an_anthropic_effort_decodes_and_reaches_the_other_dialects() -> None:
    payload: JsonObject = {
        "model": "claude-opus-4-6",
        "max_tokens": 2000,
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "medium"},
    }
    request = anthropic.decode_request(payload)
    assert request.options.reasoning_effort == "medium"
    assert anthropic.encode_request(request).payload == payload  # same dialect: exact
    assert openai_responses.encode_request(request).payload["reasoning"] == {"effort": "medium"}
    assert openai_chat.encode_request(request).payload["reasoning_effort"] == "medium"
    config = gemini.encode_request(request).payload["generationConfig"]
    assert config["thinkingConfig"]["thinkingLevel"] == "MEDIUM"


@pytest.mark.parametrize("effort", ["minimal", "none", "turbo", 3])
def test_an_effort_anthropic_does_not_name_is_a_decode_error(effort: object) -> None:
    payload: JsonObject = {
        "model": "claude-opus-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
        "output_config": {"effort": effort},  # type: ignore[dict-item]  # a bad value
    }
    with pytest.raises(DecodeError) as error:
        anthropic.decode_request(payload)
    assert error.value.path == "output_config.effort"


def _rejection(model: str, emulator: AnthropicEmulator | None = None, **fields: object) -> str:
    body: JsonObject = {
        "model": model,
        "max_tokens": 4000,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    body.update(fields)  # type: ignore[arg-type]  # JSON test values
    rejection = (emulator or AnthropicEmulator()).validate(body)
    if rejection is None:
        return ""
    assert rejection.status == 400
    error = rejection.body["error"]
    assert isinstance(error, dict) and error["type"] == "invalid_request_error"
    return str(error["message"])


def test_the_emulator_enforces_the_services_effort_rules() -> None:
    effort = {"effort": "low"}
    assert _rejection("claude-sonnet-4-5", output_config=effort) == (
        "This model does not support the effort parameter."
    )
    assert _rejection("claude-opus-4-5", output_config={"effort": "max"}) == (
        "output_config.effort 'max' is not supported by this model; supported values: "
        "low, medium, high"
    )
    assert _rejection("claude-opus-4-6", output_config={"effort": "turbo"}).startswith(
        "output_config.effort: Input should be 'low'"
    )
    assert _rejection("claude-opus-4-7", thinking={"type": "enabled", "budget_tokens": 2000})
    assert _rejection("claude-opus-4-7", thinking={"type": "disabled"})
    assert _rejection("claude-sonnet-4-5", thinking={"type": "adaptive"})
    assert not _rejection(
        "claude-opus-4-6", output_config={"effort": "max"}, thinking={"type": "adaptive"}
    )
    assert not _rejection("claude-opus-4-5", output_config=effort)
    assert not _rejection("claude-emulated", thinking={"type": "adaptive"})  # unknown: any type


def test_the_emulator_takes_the_configured_levels() -> None:
    emulator = AnthropicEmulator(effort_levels={"claude-emulated": ("low", "high")})
    assert not _rejection("claude-emulated", emulator, output_config={"effort": "high"})
    assert _rejection("claude-emulated", emulator, output_config={"effort": "medium"})
    assert _rejection("claude-emulated", output_config={"effort": "high"})


def test_every_body_the_encoder_builds_passes_the_emulator() -> None:
    """What the codec sends a model is what that model's service accepts."""
    models = [model for model, *_ in _TABLE_MODELS]
    for model in models:
        for effort in ("none", "minimal", "low", "medium", "high", "xhigh", "max"):
            request = _request(model, reasoning_effort=effort)
            payload = anthropic.encode_request(request).payload
            assert effort_violation(payload, effort_support(model)) is None, (model, effort)


_TABLE_MODELS = [
    ("claude-opus-4-5-20251101",),
    ("claude-opus-4-6",),
    ("claude-mythos-preview",),
    ("claude-opus-4-7",),
    ("claude-opus-5",),
    ("claude-sonnet-4-5",),
    ("claude-3-5-haiku-20241022",),
    ("claude-emulated",),
]


def test_an_effort_never_gets_a_foreign_tool_loop_refused() -> None:
    """Thinking only an effort turned on is left out when the open tool loop's assistant
    turn has no Anthropic thinking block (an explicit budget is refused under strict)."""
    request = openai_chat.decode_request(
        {
            "model": "claude-sonnet-4-5",
            "reasoning_effort": "low",
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "messages": [
                {"role": "user", "content": "Hi"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            ],
        }
    )
    encoded = anthropic.encode_request(request)
    assert "thinking" not in encoded.payload
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("reasoning_effort_as_budget", "options.reasoning_effort"),
        ("thinking_disabled", "options.reasoning_effort"),
    ]
    budget = replace(request, options=replace(request.options, reasoning_effort=None))
    budget = replace(budget, options=replace(budget.options, thinking_budget=2048))
    with pytest.raises(LossyHistoryError, match="thinking block"):
        anthropic.encode_request(budget)


def test_geminis_unspecified_level_is_no_effort_and_goes_back_to_gemini_as_it_came() -> None:
    """``THINKING_LEVEL_UNSPECIFIED`` asks for no level: never refused as an unknown one."""
    payload: JsonObject = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"thinkingConfig": {"thinkingLevel": "THINKING_LEVEL_UNSPECIFIED"}},
    }
    request = gemini.decode_request(payload, model="claude-opus-4-6")
    assert request.options.reasoning_effort is None
    assert gemini.encode_request(request).payload == payload
    encoded = anthropic.encode_request(request)
    assert "output_config" not in encoded.payload
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("setting_dropped", "gemini.thinkingConfig.thinkingLevel")
    ]
