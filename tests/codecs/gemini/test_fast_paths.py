"""The Gemini codec's fast paths give exactly what its general paths give.

Generated ``contents[]`` of the shapes the decode fast path takes (plain text, signed text,
thoughts, calls and function responses with or without ids), near misses of them (a key
removed, a key more, a null or a wrong type anywhere, snake_case spelling, a streamed call's
fragment) and wide random contents are decoded with the fast path and with it switched off:
the requests (or errors) are equal. Likewise generated canonical histories are encoded with
and without the encode fast path: payloads and warnings (or refusals) are equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import gemini
from interlock.codecs.gemini import _contents as contents_module
from interlock.codecs.gemini import _history as history_module
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    Citation,
    JsonPart,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    ReasoningPart,
    ReplayMode,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.codecs.fast_paths import encoded, outcome

_TEXT = st.text(max_size=6)
_ID = st.sampled_from(["c", "d", ""])
_NAME = st.sampled_from(["f", "g"])
_ODD = st.sampled_from([None, 1, True, False, [], {}, "", "x", 0.5])
_ABSENT = object()
"""A key left out of a generated object."""


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


def _optional(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), value)


_ARGS = st.sampled_from(
    [{}, {"city": "Paris"}, {"n": 1.5, "big": 2**70}, {"a": [1, {"b": None}]}, {"s": "\ud800"}]
)
_RESPONSE = st.one_of(
    st.builds(lambda text: {"output": text}, _TEXT),
    st.sampled_from(
        [{"output": 1}, {"output": {"a": 1}}, {"error": "boom"}, {"a": 1}, {}, {"output": None}]
    ),
)
_PLAIN_PART = st.one_of(
    st.builds(lambda text: {"text": text}, _TEXT),
    st.builds(lambda text: {"text": text, "thoughtSignature": "c2ln"}, _TEXT),
    st.builds(
        _build, text=_TEXT, thought=st.just(True), thoughtSignature=_optional(st.just("c2ln"))
    ),
    st.builds(
        lambda call, signature: _build(functionCall=call, thoughtSignature=signature),
        st.builds(_build, id=_optional(_ID), name=_NAME, args=_optional(_ARGS)),
        _optional(st.just("c2ln")),
    ),
    st.builds(
        lambda body: {"functionResponse": body},
        st.builds(_build, id=_optional(_ID), name=_NAME, response=_RESPONSE),
    ),
)
_PLAIN_CONTENT = st.builds(
    lambda role, parts: {"role": role, "parts": parts},
    st.sampled_from(["user", "model"]),
    st.lists(_PLAIN_PART, min_size=1, max_size=3),
)
_FRAGMENTS: list[JsonValue] = [
    {"functionCall": {"id": "c", "name": "f", "willContinue": True}, "thoughtSignature": "s"},
    {
        "functionCall": {
            "partialArgs": [{"jsonPath": "$.city", "stringValue": "Pa"}],
            "willContinue": True,
        }
    },
    {"functionCall": {"partialArgs": [{"jsonPath": "$.n", "numberValue": 3}]}},
    {"functionCall": {}},
]
_ADDED: list[tuple[str, JsonValue]] = [
    ("thought", False),
    ("thought", True),
    ("thoughtSignature", "c2ln"),
    ("thought_signature", "c2ln"),
    ("willContinue", True),
    ("partialArgs", []),
    ("inlineData", {"mimeType": "image/png", "data": "AA=="}),
    ("extra", 1),
    ("parts", [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]),
]


@st.composite
def _near_miss(draw: st.DrawFn) -> JsonValue:
    """A plain content with one thing changed anywhere in it (content, part, call or
    response body): a key removed, set to an odd value, renamed to snake_case, or one of
    :data:`_ADDED` added."""
    content: Any = json.loads(json.dumps(draw(_PLAIN_CONTENT)))
    objects: list[dict[str, Any]] = [content]
    for part in content["parts"]:
        objects.append(part)
        objects += [v for v in part.values() if isinstance(v, dict)]
    target = draw(st.sampled_from(objects))
    change = draw(st.sampled_from(["remove", "odd", "snake", "add"]))
    if change == "add" or not target:
        key, value = draw(st.sampled_from(_ADDED))
        target[key] = value
        return content
    key = draw(st.sampled_from(sorted(target)))
    if change == "remove":
        del target[key]
    elif change == "odd":
        target[key] = draw(_ODD)
    else:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        target[snake] = target.pop(key)
    return content


_WIDE_CONTENT = st.one_of(
    st.builds(
        _build,
        role=st.sampled_from([_ABSENT, "user", "model", "function", None, 1]),
        parts=st.one_of(
            st.just(_ABSENT),
            st.lists(st.one_of(_PLAIN_PART, st.sampled_from(_FRAGMENTS), _ODD), max_size=3),
            _ODD,
        ),
    ),
    st.builds(lambda parts: {"role": "model", "parts": parts}, st.just(_FRAGMENTS[:2])),
    st.builds(lambda parts: {"role": "model", "parts": parts}, st.just(_FRAGMENTS[2:])),
)
_CONTENT = st.one_of(_PLAIN_CONTENT, _PLAIN_CONTENT, _near_miss(), _near_miss(), _WIDE_CONTENT)


def _general_decode(action: Callable[[], object]) -> object:
    """The outcome of ``action`` with the decode fast path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(contents_module, "plain_content", lambda value, index: None)
        return outcome(action)


@settings(max_examples=800, deadline=None)
@given(st.lists(_CONTENT, min_size=1, max_size=8))
def test_contents_decode_alike_with_and_without_the_fast_path(items: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"contents": items}
    assert outcome(lambda: gemini.decode_request(body)) == _general_decode(
        lambda: gemini.decode_request(body)
    )


def _result(name: str, call_id: str | None = None) -> JsonValue:
    body = _build(id=_ABSENT if call_id is None else call_id, name=name, response={"output": "r"})
    return {"functionResponse": body}


def _called(name: str, call_id: str | None = None) -> JsonValue:
    return {"functionCall": _build(id=_ABSENT if call_id is None else call_id, name=name)}


_TURNS: list[JsonValue] = [
    {"role": "user", "parts": [{"text": "hi"}]},
    {"role": "model", "parts": [{"text": "so"}]},
    {"role": "model", "parts": [_called("f"), _called("f"), _called("g", "c")]},
    {"role": "model", "parts": [_called("f", "d")]},
    {"role": "user", "parts": [_result("f")]},
    {"role": "user", "parts": [_result("g", "c")]},
    {"role": "user", "parts": [_result("f", "d"), _result("f")]},
    {"role": "user", "parts": [{"text": "a"}, _result("f"), {"text": "b"}]},
    {"role": "user", "parts": [_result("f"), {"text": "b"}]},
    {"role": "model", "parts": [_FRAGMENTS[0]]},
    {"role": "model", "parts": _FRAGMENTS[1:]},
    {"role": "user", "parts": [{"text": "x"}], "extra": 1},
    {"role": "user", "parts": [_result("f")], "extra": 1},
]
"""Turns whose order matters (pairing id-less responses with calls, content boundaries,
a streamed call's fragments): each a plain content or one taking the general path."""


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_TURNS), min_size=1, max_size=10))
def test_turn_orders_decode_alike_with_and_without_the_fast_path(items: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"contents": items}
    assert outcome(lambda: gemini.decode_request(body)) == _general_decode(
        lambda: gemini.decode_request(body)
    )


def test_the_commonest_contents_take_the_fast_path() -> None:
    call = {"functionCall": {"id": "c", "name": "f", "args": {"a": 1}}, "thoughtSignature": "s"}
    result = {"functionResponse": {"name": "f", "response": {"output": "r"}}}
    for content in [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "thinking", "thought": True}, call]},
        {"role": "user", "parts": [result, {"text": "and"}]},
    ]:
        assert contents_module.plain_content(content, 0) is not None


@pytest.mark.parametrize(
    "content",
    [
        {"role": "user", "parts": [{"text": "hi"}], "extra": 1},
        {"role": "user", "parts": []},
        {"parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "", "thoughtSignature": "s"}]},
        {"role": "model", "parts": [{"text": "t", "thought": False}]},
        {"role": "model", "parts": [{"text": "t", "thought_signature": "s"}]},
        {"role": "model", "parts": [_FRAGMENTS[0]]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": None}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": []}}]},
    ],
)
def test_near_miss_contents_take_the_general_path(content: JsonValue) -> None:
    assert contents_module.plain_content(content, 0) is None


_GEMINI_SIGNATURE = Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="c2ln")
_FOREIGN = Opaque(provider="openai", format="responses.encrypted_content", data="x")
_SIGNATURE = st.sampled_from([None, None, _GEMINI_SIGNATURE, _FOREIGN])
_CALL_ID = st.sampled_from(["c", "d", ""])
_PART_MARKS = st.sampled_from(
    [{}, {}, {"gemini": {"mintedId": True}}, {"gemini": {"fields": {"x": 1}}}, {"other": {}}]
)
_CANONICAL_ARGS = st.sampled_from(['{"city": "Paris"}', "", " ", "{", "[1]", '{"n": 1e400}'])
_OUTPUT = st.one_of(
    st.builds(TextPart, text=_TEXT),
    st.builds(JsonPart, value=st.sampled_from([{"a": 1}, [1], "s", None])),
    st.just(MediaPart(media_type="image/png", data="AA==")),
)
_CANONICAL_PART = st.one_of(
    st.builds(TextPart, text=_TEXT),
    st.builds(
        TextPart,
        text=_TEXT,
        signature=_SIGNATURE,
        citations=st.sampled_from([(), (Citation(url="https://example.com"),)]),
        extra=_PART_MARKS,
    ),
    st.builds(
        ToolCallPart,
        call_id=_CALL_ID,
        name=st.sampled_from(["f", "g", ""]),
        arguments=_CANONICAL_ARGS,
        owner=st.sampled_from(["local", "local", "client", "hosted"]),
        signature=_SIGNATURE,
        extra=_PART_MARKS,
    ),
    st.builds(
        ToolResultPart,
        call_id=_CALL_ID,
        name=st.sampled_from([None, None, "f"]),
        output=st.lists(_OUTPUT, max_size=2).map(tuple),
        outcome=st.sampled_from(["success", "success", "failed", "denied"]),
        extra=st.one_of(_PART_MARKS, st.just({"gemini": {"noResponse": True}})),
    ),
    st.builds(
        ReasoningPart,
        reasoning_kind=st.sampled_from(["raw", "summary", "encrypted"]),
        text=_TEXT,
        opaque=_SIGNATURE,
        extra=st.sampled_from([{}, {"gemini": {}}, {"openai-chat:layout": {"carrier": "x"}}]),
    ),
    st.just(MediaPart(media_type="image/png", data="AA==")),
)
_MINTED = st.sampled_from([{}, {}, {"gemini": {"mintedId": True}}])
_REASONING = st.builds(
    ReasoningPart,
    reasoning_kind=st.sampled_from(["raw", "summary"]),
    text=st.sampled_from(["so", ""]),
    opaque=_SIGNATURE,
    extra=st.sampled_from([{}, {}, {"gemini": {}}]),
)
_CALL = st.builds(
    ToolCallPart,
    call_id=_CALL_ID,
    name=st.sampled_from(["f", "g"]),
    arguments=st.sampled_from(['{"a": 1}', "", "[1]"]),
    signature=_SIGNATURE,
    extra=_MINTED,
)
_RESULT = st.builds(
    ToolResultPart,
    call_id=_CALL_ID,
    name=st.sampled_from([None, "f"]),
    output=st.sampled_from([(TextPart(text="r"),), (), (JsonPart(value={"a": 1}),)]),
    extra=_MINTED,
)
_COMMON_CANONICAL = st.one_of(
    st.builds(
        lambda role, text: Message(role=role, parts=(TextPart(text=text),)),
        st.sampled_from(["user", "assistant"]),
        _TEXT,
    ),
    st.builds(
        lambda parts: Message(role="assistant", parts=tuple(parts)),
        st.lists(st.one_of(_REASONING, _CALL), min_size=1, max_size=3),
    ),
    st.builds(
        lambda parts: Message(role="tool", parts=tuple(parts)),
        st.lists(_RESULT, min_size=1, max_size=2),
    ),
    st.builds(
        lambda parts: Message(role="assistant", parts=tuple(parts)),
        st.lists(st.one_of(_CALL, _RESULT), min_size=2, max_size=3),
    ),
)
_CANONICAL = st.one_of(
    st.builds(
        lambda role, text: Message(role=role, parts=(TextPart(text=text),)),
        st.sampled_from(["user", "assistant"]),
        _TEXT,
    ),
    st.builds(
        lambda call_id, signature: Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="raw", text="so"),
                ToolCallPart(call_id=call_id, name="f", arguments='{"a": 1}', signature=signature),
            ),
        ),
        _CALL_ID,
        _SIGNATURE,
    ),
    st.builds(
        lambda call_id, text: Message(
            role="tool",
            parts=(ToolResultPart(call_id=call_id, name="f", output=(TextPart(text=text),)),),
        ),
        _CALL_ID,
        _TEXT,
    ),
)
_CANONICAL = st.one_of(
    _COMMON_CANONICAL,
    _COMMON_CANONICAL,
    st.builds(
        Message,
        role=st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
        parts=st.lists(_CANONICAL_PART, max_size=3).map(tuple),
        name=st.sampled_from([None, None, "n"]),
        extra=st.sampled_from(
            [
                {},
                {},
                {"gemini": {"content": "new"}},
                {"gemini": {"content": "continue"}},
                {"gemini": {"role": "function"}},
                {"openai-chat": {"content": None}},
            ]
        ),
    ),
)


def _encoded(request: Request, policy: ReplayPolicy, rule: bool | None) -> object:
    return encoded(lambda: gemini.encode_request(request, policy=policy, require_signatures=rule))


@settings(max_examples=800, deadline=None)
@given(
    st.lists(_CANONICAL, min_size=1, max_size=7),
    st.sampled_from(["strict", "degrade"]),
    st.sampled_from(["refuse", "drop"]),
    st.sampled_from([None, True, False]),
)
def test_histories_encode_alike_with_and_without_the_fast_path(
    messages: list[Message], mode: ReplayMode, foreign: Any, rule: bool | None
) -> None:
    request = Request(model="m", messages=tuple(messages))
    policy = ReplayPolicy(mode=mode, foreign_opaque=foreign)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(history_module, "plain_turn", lambda message, index, encoder: None)
        general = _encoded(request, policy, rule)
    assert _encoded(request, policy, rule) == general


def _call_part(call_id: str, name: str, **fields: Any) -> ToolCallPart:
    return ToolCallPart(call_id=call_id, name=name, arguments="", **fields)


_ORDERS: list[tuple[Message, ...]] = [
    (  # a result after a call of its message reads the name that call recorded
        Message(role="assistant", parts=(_call_part("c", "f"),)),
        Message(role="assistant", parts=(_call_part("c", "g"), ToolResultPart(call_id="c"))),
    ),
    (  # a minted call's result is sent without the id
        Message(
            role="assistant", parts=(_call_part("c", "f", extra={"gemini": {"mintedId": True}}),)
        ),
        Message(role="tool", parts=(ToolResultPart(call_id="c", output=(TextPart(text="r"),)),)),
    ),
    (  # another provider's reasoning payload is reported, not dropped silently
        Message(role="user", parts=(TextPart(text="hi"),)),
        Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="raw", text="so", opaque=_FOREIGN),
                _call_part("c", "f"),
            ),
        ),
    ),
]


@pytest.mark.parametrize("messages", _ORDERS)
@pytest.mark.parametrize("mode", ["strict", "degrade"])
def test_orders_that_need_the_recorded_calls_encode_alike(
    messages: tuple[Message, ...], mode: ReplayMode
) -> None:
    request = Request(model="gemini-2.5-flash", messages=messages)
    policy = ReplayPolicy(mode=mode)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(history_module, "plain_turn", lambda message, index, encoder: None)
        general = _encoded(request, policy, None)
    assert _encoded(request, policy, None) == general
