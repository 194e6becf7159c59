"""Strict request JSON: the orjson path of ``loads`` returns exactly what the strict ``json``
parse returns (value, types, float bits) or leaves the body to it, which then answers with
its own value or error — for any JSON text, repeated keys, escapes, long numbers, and bytes
that are not JSON at all."""

from __future__ import annotations

import json
import math

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from interlock.gateway import strict_json
from interlock.gateway.strict_json import StrictJsonError, loads, strict_loads
from interlock.transcript import JsonValue


def typed(value: JsonValue) -> object:
    """``value`` with every scalar's type and every float's bits explicit (``1 == 1.0 ==
    True`` in Python; ``nan != nan``)."""
    if isinstance(value, dict):
        return ("object", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("array", [typed(item) for item in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    return (type(value).__name__, value)


def outcome(parse: object, body: bytes) -> object:
    assert callable(parse)
    try:
        return ("value", typed(parse(body)))
    except (ValueError, UnicodeDecodeError) as error:  # StrictJsonError is a ValueError
        return ("error", type(error).__name__, str(error))


def same_as_strict(body: bytes) -> None:
    assert outcome(loads, body) == outcome(strict_loads, body)


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
KEYS = st.sampled_from(["a", "b", "a:b", ":", "model", "\u00e9", "k\\"]) | TEXT
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
    | st.sampled_from(["a:b", "::", "\\u003a", "\U0001f600"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.booleans())
def test_any_json_text_parses_as_the_strict_parse_does(
    value: JsonValue, ascii_only: bool, compact: bool
) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    same_as_strict(json.dumps(value, ensure_ascii=ascii_only, separators=separators).encode())


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), st.data())
def test_a_repeated_key_anywhere_is_refused_as_before(
    value: dict[str, JsonValue], data: st.DataObject
) -> None:
    text = json.dumps(value, separators=(",", ":"))
    key = data.draw(st.sampled_from(sorted(value)))
    repeated = json.dumps(data.draw(VALUES))
    body = ("{" + json.dumps(key) + ":" + repeated + "," + text[1:]).encode()
    nested = ('{"outer":' + body.decode() + "}").encode()
    for each in (body, nested):
        same_as_strict(each)
        with pytest.raises(StrictJsonError, match="duplicate key"):
            loads(each)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.binary(max_size=3), st.integers(min_value=0, max_value=200))
@example({"a": 1}, b",", 6)
@example({"a": [1, 2]}, b"]", 0)
@example({"a": "x"}, b"\x00", 7)
@example({"a": "x"}, b"\xff", 7)
def test_damaged_text_fails_or_parses_as_the_strict_parse_does(
    value: JsonValue, damage: bytes, at: int
) -> None:
    text = json.dumps(value).encode()
    at = min(at, len(text))
    same_as_strict(text[:at] + damage + text[at:])
    same_as_strict(text[:at] + text[at + len(damage) :])


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":"\\u003a","a":1}',  # an escaped colon beside a repeated key
        b'{"a":1,"a":"\\u003a"}',  # ... standing in for the dropped member's colon
        b'{"a":{"b":1,"b":2},"c":"\\u003A"}',
        b'{"a":"\\u003A:"}',
        b'{"a":123456789012345678901234567890}',  # past 64 bits: orjson makes a float
        b'{"a":-9223372036854775809}',
        b'{"a":18446744073709551615}',
        b'{"a":0.1234567890123456789012}',
        b'{"a":1e400}',
        b'{"a":1e-400}',
        b'{"a":NaN}',
        b'{"a":-Infinity}',
        b'{"a":"\\ud800"}',  # a lone surrogate escape: parsed, refused later by the caller
        b'{"a":"\xed\xa0\x80"}',  # a surrogate as UTF-8 bytes
        b"\xef\xbb\xbf{}",
        b' {"a" : 1 }\n',
        b'{"a":1}\x0c',
        b"[" * 300 + b"]" * 300,  # deeper than orjson writes
        b"[" * 2000 + b"]" * 2000,  # deeper than orjson reads
        b"null",
        b"",
    ],
)
def test_edges_parse_or_fail_as_the_strict_parse_does(body: bytes) -> None:
    try:
        expected = outcome(strict_loads, body)
    except RecursionError:
        pytest.skip("deeper than this interpreter's json recursion limit")
    assert outcome(loads, body) == expected


def test_the_orjson_path_is_taken_for_an_ordinary_request() -> None:
    """Not only correct but used: an ordinary Chat body takes the fast path."""
    body = b'{"model":"m","messages":[{"role":"user","content":"time: 12:30"}],"stream":false}'
    assert strict_json.fast_loads(body) == json.loads(body)
    assert strict_json.fast_loads(b'{"a":1,"a":2}') is None


def checked_by(check: object) -> object:
    """``loads`` with orjson's value kept when ``check`` says so (else the strict parse)."""
    assert callable(check)

    def parse(body: bytes) -> JsonValue:
        try:
            value: JsonValue = orjson.loads(body)
        except orjson.JSONDecodeError:
            return strict_loads(body)
        return value if check(body, value) else strict_loads(body)

    return parse


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from(["", "a", '"a":1,', "}", ":"]))
def test_the_walk_and_the_write_back_keep_only_the_strict_parse(
    value: JsonValue, ascii_only: bool, junk: str
) -> None:
    """strict_json.walked and .rewritten (body_split's checks of orjson's value) never keep
    a value the strict parse would not give: repeated keys, big integers, deep nesting."""
    text = json.dumps({"k": value, "a": value}, ensure_ascii=ascii_only)
    for body in (text.encode(), (text[:-1] + "," + junk + '"a":[1]}').encode()):
        for check in (strict_json.walked, strict_json.rewritten):
            assert outcome(checked_by(check), body) == outcome(strict_loads, body)


@pytest.mark.parametrize(
    "body",
    [b'{"a":[' * 150 + b"]}" * 150, b'{"a":123456789012345678901234}', b'{"a":1e19}'],
)
def test_the_walk_leaves_depth_and_big_numbers_to_the_strict_parse(body: bytes) -> None:
    assert outcome(checked_by(strict_json.walked), body) == outcome(strict_loads, body)
