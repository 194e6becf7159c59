"""``unstorable_field`` names the first value no store can hold, and nothing else."""

from __future__ import annotations

import json

import pytest

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
