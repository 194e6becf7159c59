"""The Anthropic codec's decode fast path gives exactly what its general path gives.

Generated ``messages[]`` of the shapes the fast path takes (string content; text, tool_use,
thinking and tool_result blocks), near misses of them (a key removed, a key more, a null or
a wrong type anywhere, a block in the other role's message) and wide random messages are
decoded with the fast path and with it switched off: the requests (or errors) are equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import anthropic
from interlock.codecs.anthropic import _messages as messages_module
from interlock.transcript import JsonValue
from tests.codecs.fast_paths import outcome

_TEXT = st.text(max_size=6)
_ID = st.sampled_from(["c", "d"])
_ODD = st.sampled_from([None, 1, True, False, [], {}, "", "x", 0.5])
_ABSENT = object()


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


_TEXT_BLOCK = st.builds(lambda text: {"type": "text", "text": text}, _TEXT)
_TOOL_USE = st.builds(
    lambda call_id, name, given: {"type": "tool_use", "id": call_id, "name": name, "input": given},
    _ID,
    st.sampled_from(["f", "g"]),
    st.sampled_from([{}, {"city": "Paris"}, {"n": 1.5, "big": 2**70}, {"a": [1, None]}]),
)
_THINKING = st.builds(
    lambda text, signature: {"type": "thinking", "thinking": text, "signature": signature},
    _TEXT,
    st.sampled_from(["c2ln", ""]),
)
_RESULT = st.builds(
    _build,
    type=st.just("tool_result"),
    tool_use_id=_ID,
    content=_TEXT,
    is_error=st.sampled_from([_ABSENT, True, False]),
)
_PLAIN = st.one_of(
    st.builds(
        lambda role, text: {"role": role, "content": text},
        st.sampled_from(["user", "assistant"]),
        _TEXT,
    ),
    st.builds(
        lambda blocks: {"role": "assistant", "content": blocks},
        st.lists(st.one_of(_TEXT_BLOCK, _TOOL_USE, _THINKING), min_size=1, max_size=3),
    ),
    st.builds(
        lambda blocks: {"role": "user", "content": blocks},
        st.lists(st.one_of(_TEXT_BLOCK, _RESULT), min_size=1, max_size=3),
    ),
)
_ADDED: list[tuple[str, JsonValue]] = [
    ("cache_control", {"type": "ephemeral"}),
    ("citations", [{"type": "web_search_result_location", "url": "https://example.com"}]),
    ("is_error", None),
    ("is_error", 1),
    ("content", [{"type": "text", "text": "r"}]),
    ("type", "tool_use"),
    ("type", "tool_result"),
    ("type", "image"),
    ("role", "system"),
    ("extra", 1),
]


@st.composite
def _near_miss(draw: st.DrawFn) -> JsonValue:
    """A plain message with one thing changed (message or block): a key removed, set to an
    odd value, or one of :data:`_ADDED` set."""
    message: Any = json.loads(json.dumps(draw(_PLAIN)))
    objects: list[dict[str, Any]] = [message]
    if isinstance(message["content"], list):
        objects += message["content"]
    target = draw(st.sampled_from(objects))
    change = draw(st.sampled_from(["remove", "odd", "add"]))
    if change == "add":
        key, value = draw(st.sampled_from(_ADDED))
        target[key] = value
        return message
    key = draw(st.sampled_from(sorted(target)))
    if change == "remove":
        del target[key]
    else:
        target[key] = draw(_ODD)
    return message


_WIDE = st.builds(
    _build,
    role=st.sampled_from([_ABSENT, "user", "assistant", "system", None]),
    content=st.one_of(
        st.just(_ABSENT),
        _TEXT,
        st.lists(st.one_of(_TEXT_BLOCK, _TOOL_USE, _THINKING, _RESULT, _ODD), max_size=3),
        _ODD,
    ),
)
_MESSAGE = st.one_of(_PLAIN, _PLAIN, _near_miss(), _near_miss(), _WIDE)


def _general(action: Callable[[], object]) -> object:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(messages_module, "plain_messages", lambda item, role, names, issuer: None)
        return outcome(action)


@settings(max_examples=800, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=8))
def test_messages_decode_alike_with_and_without_the_fast_path(items: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"model": "m", "max_tokens": 10, "messages": items}
    assert outcome(lambda: anthropic.decode_request(body)) == _general(
        lambda: anthropic.decode_request(body)
    )


_TURNS: list[JsonValue] = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "so"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "f", "input": {}}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "g", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "r"}]},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "tool_result", "tool_use_id": "c", "content": "r"},
            {"type": "text", "text": "b"},
        ],
    },
    {"role": "user", "content": "x", "extra": 1},
    {"role": "user", "content": [{"type": "tool_use", "id": "c", "name": "h", "input": {}}]},
]
"""Messages whose order matters (names of the calls results answer, repeated roles)."""


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_TURNS), min_size=1, max_size=8))
def test_message_orders_decode_alike_with_and_without_the_fast_path(
    items: list[JsonValue],
) -> None:
    body: dict[str, JsonValue] = {"model": "m", "max_tokens": 10, "messages": items}
    assert outcome(lambda: anthropic.decode_request(body)) == _general(
        lambda: anthropic.decode_request(body)
    )


def test_the_commonest_messages_take_the_fast_path() -> None:
    call = {"type": "tool_use", "id": "c", "name": "f", "input": {"a": 1}}
    thinking = {"type": "thinking", "thinking": "so", "signature": "c2ln"}
    result = {"type": "tool_result", "tool_use_id": "c", "content": "r", "is_error": False}
    for message in [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "t"}, call]},
        {"role": "user", "content": [result, {"type": "text", "text": "and"}]},
    ]:
        assert messages_module.plain_messages(message, None, {}) is not None
