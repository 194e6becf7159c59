"""Compact request bodies: orjson's bytes are the standard library's, and what orjson
refuses is answered by the standard library as before."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.gateway.history_cache import split_body
from interlock.gateway.model_field import COMPACT, compact_json, rewrite_model
from interlock.transcript import JsonValue

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="+"))
"""Any text a UTF-8 body can hold (no lone surrogates; no "+", see below)."""
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_compact_json_is_the_standard_encoding(value: JsonValue) -> None:
    standard = COMPACT.encode(value)
    written = compact_json(value)
    # The same value, keys, order and strings; only a number's spelling may differ
    # (1e16 for 1e+16, 0.00001 for 1e-05, 1.5e-7 for 1.5e-07): decoding what was
    # written and encoding it the standard way gives the standard bytes back.
    assert COMPACT.encode(json.loads(written)) == standard


def test_numbers_may_be_spelled_differently_but_are_the_same_numbers() -> None:
    numbers = [1e16, 1.4897566037575427e-05, 1e-05, 1.5e-07, 1.2345678901234568e17]
    assert (
        compact_json(numbers)
        == b"[1e16,0.000014897566037575427,0.00001,1.5e-7,1.2345678901234568e17]"
    )
    assert json.loads(compact_json(numbers)) == numbers


@pytest.mark.parametrize(
    "value",
    [2**64, -(2**63) - 1, {"a": [10**30]}, {1: "x"}, {"a": {2.5: True}}],
)
def test_what_orjson_refuses_is_written_by_the_standard_library(value: JsonValue) -> None:
    assert compact_json(value) == COMPACT.encode(value).encode()


def test_a_lone_surrogate_fails_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        COMPACT.encode("\ud800").encode()
    with pytest.raises(UnicodeEncodeError):
        compact_json({"text": "\ud800"})


def test_floats_keep_their_value() -> None:
    for number in (1e16, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, -0.0):
        assert json.loads(compact_json([number])) == [number]
        assert math.copysign(1, json.loads(compact_json(number))) == math.copysign(1, number)


def test_rewrite_model_falls_back_to_a_compact_body_when_ambiguous() -> None:
    body = json.dumps({"model": "a", "x": {"model": "a"}, "n": 10**20}).encode()
    assert json.loads(rewrite_model(body, "a", "b")) == {
        "model": "b",
        "x": {"model": "a"},
        "n": 10**20,
    }


MODEL_BODIES = [
    b'{"model":"a","input":[{"role":"user","content":"\\"model\\": \\"a\\""}]}',
    b'{"input":[{"role":"user","content":"x"}],"model":"a","store":false}',
    b'{"input":[{"content":"\xc3\xa9\xe2\x9c\x93"}] , "model" :  "a"}',
    b'{"input":[{"model":"a"}],"model":"a"}',
    b'{"input":[{}],"model":"\\u0061"}',
]


@pytest.mark.parametrize("body", MODEL_BODIES)
def test_the_parsed_model_position_gives_what_the_search_gives(body: bytes) -> None:
    split = split_body(body.decode(), "input")
    at = split.model_at if split is not None else -1
    assert at >= 0 and body.startswith(b'"', at)
    searched = rewrite_model(body, "a", "upstream-b")
    assert rewrite_model(body, "a", "upstream-b", at=at) == searched
    assert json.loads(searched) == {**json.loads(body), "model": "upstream-b"}


def test_a_noted_position_is_used_without_searching() -> None:
    body = b'{"input":[{"model":"a"}],"model":"a"}'  # ambiguous to a search: re-serialized
    at = body.rindex(b'"a"')
    assert rewrite_model(body, "a", "b", at=at) == b'{"input":[{"model":"a"}],"model":"b"}'
    assert rewrite_model(body, "a", "b") == b'{"input":[{"model":"a"}],"model":"b"}'
    # A position that does not hold the old name as json.dumps writes it: searched instead.
    escaped = b'{"input":[],"model":"\\u0061"}'
    assert json.loads(rewrite_model(escaped, "a", "b", at=escaped.index(b'"\\u'))) == {
        "input": [],
        "model": "b",
    }
