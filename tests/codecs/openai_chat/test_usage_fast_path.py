"""The Chat usage decoder's fast path (the three plain counts) gives exactly what the
general path gives: generated usage objects of that shape and near misses (a key more or
less, a float, a boolean, a total that is not the sum) decode alike with it switched off."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs.openai_chat import _usage as usage_module
from interlock.codecs.openai_chat._usage import decode_usage, plain_usage
from interlock.transcript import JsonValue
from tests.codecs.fast_paths import outcome

_COUNT = st.one_of(st.integers(-2, 50), st.sampled_from([None, True, 1.0, "3", []]))
_KEYS = ["prompt_tokens", "completion_tokens", "total_tokens"]


@st.composite
def _usages(draw: st.DrawFn) -> JsonValue:
    prompt, completion = draw(st.integers(0, 50)), draw(st.integers(0, 50))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion + draw(st.sampled_from([0, 0, 0, 1, -1])),
    }
    for detail, field in (
        ("prompt_tokens_details", "cached_tokens"),
        ("completion_tokens_details", "reasoning_tokens"),
    ):
        if draw(st.booleans()):
            usage[detail] = draw(
                st.one_of(
                    st.fixed_dictionaries({}, optional={field: _COUNT, "audio_tokens": _COUNT}),
                    _COUNT,
                )
            )
    for _ in range(draw(st.integers(0, 2))):
        key = draw(
            st.sampled_from([*_KEYS, "prompt_cache_hit_tokens", "completion_tokens_details"])
        )
        if draw(st.booleans()) and key in usage:
            del usage[key]
        else:
            usage[key] = draw(_COUNT)
    return usage


def _general(value: JsonValue) -> object:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(usage_module, "plain_usage", lambda value: None)
        return outcome(lambda: decode_usage(value, "usage"))


@settings(max_examples=500, deadline=None)
@given(st.one_of(_usages(), _COUNT))
def test_usage_decodes_alike_with_and_without_the_fast_path(value: JsonValue) -> None:
    assert outcome(lambda: decode_usage(value, "usage")) == _general(value)


def test_the_plain_counts_take_the_fast_path() -> None:
    assert plain_usage({"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8})
    details = {"completion_tokens_details": {"reasoning_tokens": 2, "audio_tokens": 0}}
    usage = plain_usage({"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8, **details})
    assert usage is not None
    assert usage.reasoning_tokens == 2


@pytest.mark.parametrize(
    "value",
    [
        {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 9},
        {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8.0},
        {"prompt_tokens": True, "completion_tokens": 3, "total_tokens": 4},
        {"prompt_tokens": 5, "completion_tokens": 3, "cached": 8},
        {"prompt_tokens": 5, "completion_tokens": 3},
        {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8, "x": 1},
        {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8, "x": 1, "y": 2},
        {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "total_tokens": 2,
            "prompt_tokens_details": None,
        },
        {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "total_tokens": 2,
            "completion_tokens_details": {"reasoning_tokens": None},
        },
    ],
)
def test_near_misses_take_the_general_path(value: JsonValue) -> None:
    assert plain_usage(value) is None
