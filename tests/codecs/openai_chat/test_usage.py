"""Usage both ways: reasoning and cached tokens, detail objects kept whole."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs.openai_chat._usage import decode_usage, encode_usage
from interlock.transcript import Usage

SHAPES: list[dict[str, Any]] = [
    {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 0},
    },
    {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"audio_tokens": 0},
    },
    {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": None,
    },
    {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 99},
    {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 18,
        "completion_tokens_details": {"reasoning_tokens": 3},
    },
]


@pytest.mark.parametrize("shape", SHAPES)
def test_usage_shapes_round_trip(shape: dict[str, Any]) -> None:
    assert encode_usage(decode_usage(shape, "usage")) == shape


def test_reasoning_is_inside_completion_tokens() -> None:
    usage = decode_usage(
        {
            "prompt_tokens": 1,
            "completion_tokens": 9,
            "total_tokens": 10,
            "completion_tokens_details": {"reasoning_tokens": 7},
        },
        "usage",
    )
    assert (usage.output_tokens, usage.reasoning_tokens) == (9, 7)


def test_gemini_tool_prompt_tokens_count_as_prompt() -> None:
    wire = encode_usage(
        Usage(
            input_tokens=10,
            output_tokens=4,
            reasoning_tokens=2,
            tool_prompt_tokens=5,
            cached_input_tokens=3,
        )
    )
    assert wire == {
        "prompt_tokens": 15,
        "completion_tokens": 4,
        "total_tokens": 19,
        "prompt_tokens_details": {"cached_tokens": 3},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }
