"""Usage both ways: reasoning and cached tokens, detail objects kept whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.codecs import openai_responses
from interlock.codecs.openai_chat._usage import CACHE_HITS, decode_usage, encode_usage
from interlock.transcript import Message, Response, Usage

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


def test_null_counts_are_not_counted_yet_and_go_back_as_null() -> None:
    """Databricks (recorded in the corpus) sends ``null`` counts in the chunks before the
    last: zero for the transcript, ``null`` again on the wire."""
    shape: dict[str, Any] = {
        "cache_read_input_tokens": 0,
        "completion_tokens": None,
        "prompt_tokens": 26,
        "total_tokens": None,
        "cache_creation_input_tokens": 0,
    }
    usage = decode_usage(shape, "usage")
    assert (usage.input_tokens, usage.output_tokens) == (26, 0)
    assert encode_usage(usage) == shape
    counted = Usage(input_tokens=26, output_tokens=5, extra=usage.extra)
    assert encode_usage(counted)["completion_tokens"] == 5  # a real count is never nulled


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


CORPUS = Path(__file__).parents[3] / "conformance" / "corpus" / "payloads" / "deepseek"


def _usages(value: Any) -> list[dict[str, Any]]:
    """Every ``usage`` object holding DeepSeek's cache counters, anywhere in ``value``."""
    if isinstance(value, list):
        return [usage for item in value for usage in _usages(item)]
    if not isinstance(value, dict):
        return []
    found = [usage for item in value.values() for usage in _usages(item)]
    usage = value.get("usage")
    if isinstance(usage, dict) and CACHE_HITS in usage:
        found.append(usage)
    return found


DEEPSEEK = [
    usage
    for path in sorted(CORPUS.glob("*.json"))
    for usage in _usages(json.loads(path.read_text()))
]


def test_the_corpus_holds_deepseek_cache_hits() -> None:
    assert sum(1 for usage in DEEPSEEK if usage[CACHE_HITS]) >= 5


@pytest.mark.parametrize("shape", DEEPSEEK)
def test_deepseek_cache_hits_are_the_cached_input_tokens(shape: dict[str, Any]) -> None:
    """As recorded (with ``prompt_tokens_details``) and as DeepSeek documents it (without):
    the hits are the canonical cached tokens, and the wire comes back exactly."""
    documented = {key: value for key, value in shape.items() if key != "prompt_tokens_details"}
    for wire in (shape, documented):
        usage = decode_usage(wire, "usage")
        assert usage.cached_input_tokens == wire[CACHE_HITS]
        assert usage.input_tokens == wire[CACHE_HITS] + wire["prompt_cache_miss_tokens"]
        assert encode_usage(usage) == wire
        responses = openai_responses.encode_response(
            Response(message=Message(role="assistant", parts=()), usage=usage)
        )["usage"]
        assert responses["input_tokens_details"]["cached_tokens"] == wire[CACHE_HITS]
