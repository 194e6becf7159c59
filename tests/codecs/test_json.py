"""codecs/_json.loads (and loads_utf8, of bytes) answers exactly as json.loads: the same
value or the same error;
check_json raises exactly what json.loads raises; compact writes exactly what json.dumps
writes (compact separators, ensure_ascii off)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import _json
from interlock.codecs._json import check_json, compact, loads, loads_utf8

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


def _same(text: str) -> None:
    """``loads`` and ``json.loads`` agree on ``text``: equal values (NaN-aware, by repr)
    of equal types, or the same exception type and message."""
    try:
        expected: object = json.loads(text)
    except (ValueError, RecursionError) as error:
        for action in (loads, check_json):
            with pytest.raises(type(error)) as raised:
                action(text)
            assert str(raised.value) == str(error)
        return
    assert repr(loads(text)) == repr(expected)
    check_json(text)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.booleans())
def test_any_json_text_decodes_as_json_loads_does(value: object, compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    _same(json.dumps(value, separators=separators, ensure_ascii=False))
    _same(json.dumps(value))


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=60), st.text(max_size=3))
def test_damaged_json_text_fails_or_decodes_as_json_loads_does(
    value: object, cut: int, junk: str
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    _same(text[:cut] + junk + text[cut:])
    _same(text[:cut])


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',  # the last of repeated keys
        "18446744073709551616",  # beyond 64 bits: orjson would give a float
        "-9223372036854775809",
        '{"n": 123456789012345678901234567890}',
        "NaN",
        "[Infinity, -Infinity]",
        "1e400",
        '"\\ud800"',  # a lone surrogate escape
        '"\\ud83d\\ude00"',
        "\ufeff{}",  # a BOM: json.loads's own message
        '"\ud800"',  # a lone surrogate in the text itself
        "[" * 300 + "]" * 300,  # deeper than orjson is asked to go
        "[" * 200 + "]" * 200,  # a long text, not too deep
        '{"a": [' + "0," * 300 + "0]}",
        "[" * 5000 + "]" * 5000,  # deeper than json's recursion limit
        "[" * 1000 + "]" * 1000,  # orjson takes it, json may not
        "[" * 257 + "]" * 257,
        " {} ",
        "",
        "[1,]",
        '"\x01"',
        "-0",
        "0.1e-400",
        "5e-324",
    ],
)
def test_where_orjson_and_json_differ_json_decides(text: str) -> None:
    _same(text)
    _same_bytes(text.encode("utf-8", "surrogatepass"))
    _same_bytes(("[" + text + ', "' + "[{" * 200 + '"]').encode("utf-8", "surrogatepass"))


def _same_bytes(data: bytes) -> None:
    """``loads_utf8`` and ``json.loads`` agree on ``data`` (as ``_same``)."""
    try:
        expected: object = json.loads(data)
    except (ValueError, RecursionError) as error:
        with pytest.raises(type(error)) as raised:
            loads_utf8(data)
        assert str(raised.value) == str(error)
        return
    assert repr(loads_utf8(data)) == repr(expected)


_ODD_BYTES = st.sampled_from(
    [b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\xc3", b"\xfe\xff", b"9" * 20, b"["]
)


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=60), _ODD_BYTES | st.binary(max_size=3))
def test_any_json_bytes_decode_as_json_loads_does(value: object, cut: int, junk: bytes) -> None:
    text = json.dumps(value, ensure_ascii=False)
    for encoding in ("utf-8", "utf-16", "utf-32-le", "utf-8-sig"):
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:  # a lone surrogate
            data = text.encode("utf-8", "surrogatepass")
        _same_bytes(data)
    data = json.dumps(value).encode()
    _same_bytes(data)
    _same_bytes(data[:cut] + junk + data[cut:])
    _same_bytes(junk + data)


def test_an_ordinary_answer_is_read_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only equal but used: an answer with a large tool result never reaches json."""
    data = json.dumps({"output": [{"text": '[{"row": 1}]' * 20_000}]}).encode()
    expected = json.loads(data)

    def refused(*_: object) -> object:
        raise AssertionError("json.loads was called")

    monkeypatch.setattr(_json.json, "loads", refused)
    assert loads_utf8(data) == expected


def test_a_nan_decodes_as_a_nan() -> None:
    value = loads('{"x": NaN}')
    assert isinstance(value, dict) and isinstance(value["x"], float) and math.isnan(value["x"])


def _dumped(value: object) -> object:
    """``json.dumps``'s compact text of ``value``, or its exception (type and message)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as error:
        return (type(error), str(error))


def _compacted(value: object) -> object:
    try:
        return compact(value)  # pyright: ignore[reportArgumentType] -- any value on purpose
    except (TypeError, ValueError, RecursionError) as error:
        return (type(error), str(error))


_ODD_SCALARS = (
    _SCALARS
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x3F), max_size=4)
    | st.sampled_from(["\ud800", "a\udfffb", "\u2028", "\x7f", "é\U0001f600"])
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.integers(min_value=-(2**63) - 2, max_value=-(2**63) + 2)
    | st.sampled_from([1e-05, 1e16, -0.0, 100.0, float("nan"), 5e-324, object(), b"x"])
)
_ODD_VALUES = st.recursive(
    _ODD_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner)
        | st.dictionaries(st.sampled_from([1, True, None, 2.5]), inner, max_size=2)
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(_ODD_VALUES)
def test_compact_writes_what_json_dumps_writes(value: object) -> None:
    assert _compacted(value) == _dumped(value)


def _nested(depth: int) -> object:
    value: object = "x"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [1, 31, 32, 33, 34, 300, 5000])
def test_compact_of_deep_values_is_json_dumps(depth: int) -> None:
    value = _nested(depth)
    assert _compacted(value) == _dumped(value)


def test_compact_of_a_cycle_fails_as_json_dumps_does() -> None:
    cycle: dict[str, object] = {}
    cycle["self"] = [cycle]
    assert _compacted(cycle) == _dumped(cycle)
