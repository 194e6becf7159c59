"""``transcript.build``'s constructors give exactly the objects the classes give.

Generated arguments are built both ways: the objects are equal, their reprs too, every
field is set, the object is frozen and its empty ``extra`` is a fresh dict. A builder that
no longer names its class's fields refuses to import.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.transcript import (
    Citation,
    Message,
    Opaque,
    PartDelta,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    build,
)

_TEXT = st.text(max_size=4)
_ID = st.one_of(st.none(), _TEXT)
_OPAQUE = st.one_of(st.none(), st.builds(Opaque, provider=_TEXT, format=_TEXT, data=_TEXT))
_EXTRA = st.one_of(st.none(), st.just({"openai-responses": {"~item": {}}}))
_CITATIONS = st.sampled_from([(), (Citation(url="https://example.com"),)])


def _keywords(**values: object) -> dict[str, object]:
    """The keyword arguments that were given (``extra`` ``None`` is the default)."""
    return {key: value for key, value in values.items() if key != "extra" or value is not None}


def _alike(built: object, constructed: object) -> None:
    assert built == constructed
    assert repr(built) == repr(constructed)
    assert type(built) is type(constructed)
    for item in dataclasses.fields(constructed):
        getattr(built, item.name)  # every slot is set
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.extra = {}


@given(_TEXT, _OPAQUE, _ID, _CITATIONS, _EXTRA)
def test_text_part(text: str, signature, item_id, citations, extra) -> None:
    made = build.text_part(
        text, signature=signature, item_id=item_id, citations=citations, extra=extra
    )
    given_ = _keywords(signature=signature, item_id=item_id, citations=citations, extra=extra)
    _alike(made, TextPart(text=text, **given_))


@given(st.sampled_from(["raw", "summary", "encrypted"]), _TEXT, _OPAQUE, _ID, _EXTRA)
def test_reasoning_part(kind, text, opaque, item_id, extra) -> None:
    made = build.reasoning_part(kind, text, opaque=opaque, item_id=item_id, extra=extra)
    given_ = _keywords(opaque=opaque, item_id=item_id, extra=extra)
    _alike(made, ReasoningPart(reasoning_kind=kind, text=text, **given_))


@given(_TEXT, _TEXT, _TEXT, _OPAQUE, _ID, _EXTRA)
def test_tool_call_part(call_id, name, arguments, signature, item_id, extra) -> None:
    made = build.tool_call_part(
        call_id, name, arguments, signature=signature, item_id=item_id, extra=extra
    )
    given_ = _keywords(signature=signature, item_id=item_id, extra=extra)
    _alike(made, ToolCallPart(call_id=call_id, name=name, arguments=arguments, **given_))


@given(_TEXT, st.lists(_TEXT, max_size=2), st.sampled_from(["success", "failed"]), _ID, _ID, _EXTRA)
def test_tool_result_part(call_id, texts, outcome, name, item_id, extra) -> None:
    output = tuple(TextPart(text=text) for text in texts)
    made = build.tool_result_part(
        call_id, output, outcome=outcome, name=name, item_id=item_id, extra=extra
    )
    given_ = _keywords(outcome=outcome, name=name, item_id=item_id, extra=extra)
    _alike(made, ToolResultPart(call_id=call_id, output=output, **given_))


@given(st.sampled_from(["system", "user", "assistant", "tool"]), _ID, _ID, _EXTRA)
def test_message(role, message_id, name, extra) -> None:
    parts = (TextPart(text="a"),)
    made = build.message(role, parts, id=message_id, name=name, extra=extra)
    given_ = _keywords(id=message_id, name=name, extra=extra)
    _alike(made, Message(role=role, parts=parts, **given_))


def test_each_empty_extra_is_a_fresh_dict() -> None:
    assert build.text_part("a").extra is not build.text_part("a").extra
    assert build.message("user", ()).extra is not build.message("user", ()).extra


def test_a_builder_naming_other_fields_than_its_class_refuses() -> None:
    with pytest.raises(TypeError, match="TextPart has fields"):
        build._setters(TextPart, "kind", "text")


@given(st.integers(min_value=0, max_value=9), _TEXT)
def test_part_delta(index: int, delta: str) -> None:
    made = build.part_delta(index, delta)
    constructed = PartDelta(index=index, delta=delta)
    assert made == constructed and repr(made) == repr(constructed)
    assert type(made) is PartDelta and made.logprobs == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.delta = "x"  # pyright: ignore[reportAttributeAccessIssue] -- frozen, checked
