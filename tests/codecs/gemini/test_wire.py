"""Wire helpers: snake_case → camelCase, known/unknown field split, typed readers."""

from __future__ import annotations

import pytest

from interlock.codecs.gemini._wire import as_int, as_number, camel, split_fields
from interlock.transcript import DecodeError


def test_camel_case_conversion() -> None:
    assert camel("thought_signature") == "thoughtSignature"
    assert camel("parameters_json_schema") == "parametersJsonSchema"
    assert camel("text") == "text"
    assert camel("thoughtSignature") == "thoughtSignature"


def test_split_fields_keeps_unknown_values_verbatim_under_camel_case_names() -> None:
    known, unknown = split_fields(
        {"function_call": 1, "text": 2, "future_key": {"inner_key": 3}},
        frozenset({"functionCall", "text"}),
    )
    assert known == {"functionCall": 1, "text": 2}
    assert unknown == {"futureKey": {"inner_key": 3}}


def test_numbers_refuse_booleans() -> None:
    with pytest.raises(DecodeError):
        as_int(True, "x")
    with pytest.raises(DecodeError):
        as_number(False, "x")
    assert as_number(1, "x") == 1
