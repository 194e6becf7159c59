"""usageMetadata: candidatesTokenCount excludes thoughts (trap 31)."""

from __future__ import annotations

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.codecs.gemini._usage import decode_usage, encode_usage
from interlock.transcript import JsonObject, Usage


def test_output_tokens_include_thoughts_and_encode_subtracts_them() -> None:
    wire: JsonObject = {
        "promptTokenCount": 15,
        "candidatesTokenCount": 6,
        "thoughtsTokenCount": 190,
        "toolUsePromptTokenCount": 3,
        "totalTokenCount": 214,
    }
    usage = decode_usage(wire, "usageMetadata")
    assert usage == Usage(
        input_tokens=15, output_tokens=196, reasoning_tokens=190, tool_prompt_tokens=3
    )
    assert usage.total_tokens == 214
    assert encode_usage(usage) == wire


def test_openai_usage_encodes_with_candidates_excluding_reasoning() -> None:
    assert encode_usage(
        Usage(input_tokens=10, output_tokens=50, reasoning_tokens=30, cached_input_tokens=4)
    ) == {
        "promptTokenCount": 10,
        "cachedContentTokenCount": 4,
        "candidatesTokenCount": 20,
        "thoughtsTokenCount": 30,
        "totalTokenCount": 60,
    }


@pytest.mark.parametrize(
    "wire",
    [
        {"promptTokenCount": 9, "totalTokenCount": 9},
        {"promptTokenCount": 9, "candidatesTokenCount": 0, "totalTokenCount": 9},
        {"promptTokenCount": 9},
        {
            "promptTokenCount": 9,
            "candidatesTokenCount": 1,
            "totalTokenCount": 99,
            "trafficType": "ON_DEMAND",
        },
    ],
)
def test_usage_round_trip_is_exact(wire: JsonObject) -> None:
    assert encode_usage(decode_usage(wire, "u")) == wire


@pytest.mark.parametrize("dialect", ["openai_responses", "anthropic", "openai_chat"])
def test_tool_use_prompt_tokens_reach_every_client_as_prompt_tokens(dialect: str) -> None:
    """Gemini counts the prompt of its own tool runs (code execution, search) apart; every
    other dialect has one input count, which must include them (trap 31)."""
    wire: JsonObject = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "5117"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {
            "promptTokenCount": 32,
            "candidatesTokenCount": 575,
            "toolUsePromptTokenCount": 619,
            "totalTokenCount": 1226,
        },
    }
    response = gemini.decode_response(wire)
    module = {
        "openai_responses": openai_responses,
        "anthropic": anthropic,
        "openai_chat": openai_chat,
    }[dialect]
    back = module.decode_response(module.encode_response(response)).usage
    assert back is not None
    assert back.input_tokens + back.tool_prompt_tokens == 32 + 619
