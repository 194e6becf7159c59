"""``unstorable_field`` names the first value no store can hold, and nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.stores import unstorable_field
from interlock.transcript import JsonValue


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"state": {"note": "\ud83d"}}, "$.state.note"),
        (
            {"messages": [{"content": "ok"}, {"content": "cut \udc00 half"}]},
            "$.messages[1].content",
        ),
        ({"state": {"\ud83d": 1}}, "$.state.<key>"),
        ({"state": {"ratio": float("nan")}}, "$.state.ratio"),
        ({"state": [1.0, float("inf")]}, "$.state[1]"),
        ("\ud800", "$"),
    ],
)
def test_the_first_unstorable_field_is_named(value: JsonValue, path: str) -> None:
    assert unstorable_field(value) == path


@pytest.mark.parametrize(
    "value",
    [
        {"state": {"emoji": "\U0001f600", "text": "é", "n": 1.5, "none": None}},
        json.loads('{"pair": "\\ud83d\\ude00"}'),  # an escaped surrogate *pair* is one emoji
        [],
    ],
)
def test_storable_values_pass(value: JsonValue) -> None:
    assert unstorable_field(value) is None


def _reference(value: JsonValue) -> bool:
    """Storable as the standard library decides it (the check before orjson went first)."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


_TEXT = st.text(alphabet=st.characters(blacklist_categories=()))  # lone surrogates included
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(deadline=None)
@given(_JSON)
def test_the_orjson_check_agrees_with_the_standard_library(value: JsonValue) -> None:
    found = unstorable_field(value)
    assert (found is None) == _reference(value)
