"""Bodies written from kept pieces are the bytes the whole value encodes to."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway import json_pieces
from interlock.gateway.json_pieces import Written, items_json, with_array
from interlock.gateway.model_field import compact_json
from interlock.transcript import JsonObject, JsonValue

PLACEHOLDER = json_pieces._PLACEHOLDER  # pyright: ignore[reportPrivateUsage]
TEXT = st.text(st.characters(exclude_categories=["Cs"])) | st.sampled_from(
    [PLACEHOLDER, '"' + PLACEHOLDER, PLACEHOLDER + '"', '"' + PLACEHOLDER + '"', "\\" + PLACEHOLDER]
)
"""Any text a body can hold, and the placeholder's text where a payload could carry it."""
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)
ITEMS = st.lists(JSON, max_size=6)


def _body(written: Written | None) -> bytes | None:
    return None if written is None else written.body


@settings(deadline=None)  # no timing assertions: the machine is shared
@given(ITEMS, ITEMS)
def test_pieces_are_the_encoding_of_their_items(
    first: list[JsonValue], second: list[JsonValue]
) -> None:
    assert items_json(first) == compact_json(first)[1:-1]
    assert items_json(first, pieces=True) == items_json(first)


@settings(deadline=None)  # no timing assertions: the machine is shared
@given(st.dictionaries(TEXT, JSON, max_size=5), st.data(), st.lists(ITEMS, max_size=4))
def test_with_array_is_the_whole_encoding_or_declines(
    payload: JsonObject, data: st.DataObject, lists: list[list[JsonValue]]
) -> None:
    key = data.draw(st.sampled_from([*payload, "input"]))
    pieces = [items_json(items) for items in lists]
    views = [memoryview(piece) for piece in pieces if piece is not None]
    written = with_array(payload, key, views)
    items = [item for each in lists for item in each]
    expected = compact_json({**payload, key: items})
    if written is not None:
        assert written.body == expected
        assert written.items == compact_json(items)[1:-1]  # where the items are
    if PLACEHOLDER not in compact_json(payload).decode():
        assert written is not None  # declines only where the placeholder's text could mislead


@pytest.mark.parametrize("lure", ['"' + PLACEHOLDER, PLACEHOLDER])
@pytest.mark.parametrize("first", [True, False])
def test_a_string_that_encodes_like_the_placeholder_declines(lure: str, first: bool) -> None:
    payload: JsonObject = {"text": lure, "input": []} if first else {"input": [], "text": lure}
    assert with_array(payload, "input", [b"1,2"]) is None


def test_the_placeholder_inside_a_longer_string_is_not_mistaken() -> None:
    text = "x" + PLACEHOLDER + "y"
    assert _body(with_array({"text": text, "input": []}, "input", [b"1", b"", b"2"])) == (
        compact_json({"text": text, "input": [1, 2]})
    )


def test_what_orjson_refuses_declines() -> None:
    assert items_json([2**64]) is None
    assert items_json([{"text": "\ud800"}], pieces=True) is None
    assert with_array({"input": [], "n": 2**64}, "input", []) is None
