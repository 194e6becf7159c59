"""The Responses codec's fast paths give exactly what its general paths give.

Generated ``input`` items of the shapes the decode fast path takes (``_plain``: plain
input and assistant messages, function calls and outputs with and without ids, reasoning
items), near misses of them (a key removed, a key more, a null or a wrong type anywhere,
a minted id) and wide random items are decoded in generated orders with the fast path
and with it switched off: the requests (or errors) are equal, boundary marks between
items of one id included. Likewise generated canonical histories (plain messages and wide
random ones, every regime, both policies, two issuers) are encoded with and without the
encode fast path (``_plain_encode``): payloads and warnings (or refusals) are equal.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import openai_responses
from interlock.codecs.openai_responses import _items as items_module
from interlock.codecs.openai_responses import _request_encode as encode_module
from interlock.codecs.openai_responses import _usage as usage_module
from interlock.codecs.openai_responses._plain_encode import plain_items
from interlock.codecs.openai_responses._replay import ReplayContext
from interlock.transcript import (
    OPENAI_ENCRYPTED_CONTENT,
    Citation,
    Continuation,
    JsonPart,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    Request,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    ToolResultPart,
)
from tests.codecs.fast_paths import encoded, outcome

_TEXT = st.text(max_size=5)
_ID = st.sampled_from(["msg_1", "msg_interlock_2", "rs_1", "rs_interlock_3", "fc_1", ""])
_ODD = st.sampled_from([None, 1, True, [], {}, "", "x", 0.5, "message", "completed"])
_ABSENT = object()
"""A key left out of a generated object."""


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


def _optional(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), value)


_INPUT_TEXT = st.builds(lambda text: {"type": "input_text", "text": text}, _TEXT)
_OUTPUT_TEXT = st.builds(
    lambda text: {"type": "output_text", "text": text, "annotations": []}, _TEXT
)
_SUMMARY = st.builds(lambda text: {"type": "summary_text", "text": text}, _TEXT)
_PLAIN_ITEM = st.one_of(
    st.builds(
        _build,
        type=_optional(st.just("message")),
        role=st.sampled_from(["user", "system", "developer"]),
        content=st.one_of(_TEXT, st.lists(_INPUT_TEXT, max_size=2)),
    ),
    st.builds(_build, type=_optional(st.just("message")), role=st.just("assistant"), content=_TEXT),
    st.builds(
        _build,
        id=_ID,
        type=st.just("message"),
        status=st.just("completed"),
        role=st.just("assistant"),
        content=st.lists(_OUTPUT_TEXT, min_size=1, max_size=2),
    ),
    st.builds(
        _build,
        type=st.just("function_call"),
        id=_optional(_ID),
        status=_optional(st.just("completed")),
        call_id=st.sampled_from(["c", "d"]),
        name=st.sampled_from(["f", "g"]),
        arguments=st.sampled_from(["{}", '{"a": 1}', ""]),
    ),
    st.builds(
        _build,
        type=st.just("function_call_output"),
        id=_optional(_ID),
        call_id=st.sampled_from(["c", "d"]),
        output=_TEXT,
    ),
    st.builds(
        _build,
        type=st.just("reasoning"),
        id=_optional(_ID),
        summary=st.lists(_SUMMARY, max_size=2),
        encrypted_content=_optional(st.sampled_from(["blob", ""])),
    ),
)
_ADDED: list[tuple[str, JsonValue]] = [
    ("id", "msg_9"),
    ("status", "completed"),
    ("status", "in_progress"),
    ("content", []),
    ("content", [{"type": "reasoning_text", "text": "r"}]),
    ("annotations", [{"type": "url_citation", "url": "https://e.com"}]),
    ("logprobs", []),
    ("encrypted_content", None),
    ("role", "assistant"),
    ("type", None),
    ("extra", 1),
]


@st.composite
def _near_miss(draw: st.DrawFn) -> JsonValue:
    """A plain item with one thing changed anywhere in it (the item or one of its content
    or summary entries): a key removed, set to an odd value, or one of :data:`_ADDED`
    added."""
    item: Any = json.loads(json.dumps(draw(_PLAIN_ITEM)))
    objects: list[dict[str, Any]] = [item]
    for key in ("content", "summary"):
        if isinstance(item.get(key), list):
            objects += [entry for entry in item[key] if isinstance(entry, dict)]
    target = draw(st.sampled_from(objects))
    change = draw(st.sampled_from(["remove", "odd", "add"]))
    if change == "add" or not target:
        key, value = draw(st.sampled_from(_ADDED))
        target[key] = value
        return item
    key = draw(st.sampled_from(sorted(target)))
    if change == "remove":
        del target[key]
    else:
        target[key] = draw(_ODD)
    return item


_WIDE_ITEM = st.one_of(
    _ODD,
    st.builds(
        _build,
        type=st.sampled_from(
            [_ABSENT, "message", "function_call", "function_call_output", "reasoning", None, 1]
        ),
        role=st.sampled_from([_ABSENT, "user", "assistant", "tool", None]),
        id=_optional(st.one_of(_ID, _ODD)),
        content=_optional(st.one_of(_TEXT, st.lists(st.one_of(_INPUT_TEXT, _OUTPUT_TEXT)), _ODD)),
        summary=_optional(st.one_of(st.lists(_SUMMARY, max_size=1), _ODD)),
    ),
)
_ITEM = st.one_of(_PLAIN_ITEM, _PLAIN_ITEM, _near_miss(), _near_miss(), _WIDE_ITEM)


def _general(action: Callable[[], object]) -> object:
    """The outcome of ``action`` with the decode fast path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(items_module._Grouper, "add_plain", lambda self, data: False)
        return outcome(action)


@settings(max_examples=800, deadline=None)
@given(st.lists(_ITEM, min_size=1, max_size=8), st.sampled_from(["openai", "xai"]))
def test_items_decode_alike_with_and_without_the_fast_path(
    items: list[JsonValue], issuer: str
) -> None:
    body: dict[str, JsonValue] = {"model": "m", "input": items}
    decode = lambda: openai_responses.decode_request(body, issuer=issuer)  # noqa: E731
    assert outcome(decode) == _general(decode)


def _same_id_runs() -> st.SearchStrategy[list[JsonValue]]:
    """Items of one kind and id in a row (where the boundary mark decides the grouping)."""
    message = st.builds(
        lambda item_id, text: {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        },
        st.sampled_from(["msg_1", "msg_interlock_1"]),
        _TEXT,
    )
    idless = st.builds(lambda text: {"role": "assistant", "content": text}, _TEXT)
    reasoning = st.builds(
        lambda item_id: _build(type="reasoning", id=item_id, summary=[]),
        st.sampled_from([_ABSENT, "rs_1", "rs_interlock_1"]),
    )
    return st.lists(st.one_of(message, idless, reasoning), min_size=2, max_size=6)


@settings(max_examples=400, deadline=None)
@given(_same_id_runs())
def test_runs_of_one_item_id_decode_alike(items: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"input": items}
    decode = lambda: openai_responses.decode_request(body)  # noqa: E731
    assert outcome(decode) == _general(decode)


def test_the_commonest_items_take_the_fast_path() -> None:
    grouper = items_module._Grouper("openai")
    for item in [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "blob"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "r"},
        {"role": "assistant", "content": "done", "type": "message"},
    ]:
        assert grouper.add_plain(item)
    assert [message.role for message in grouper.messages] == ["user", "user", "assistant", "tool"]


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": "hi", "id": "m"},
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://e.com/a"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "t"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}},
        {"type": "function_call_output", "call_id": "c", "output": [], "id": "x"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "r"}]},
        {"type": "mcp_call", "id": "m"},
    ],
)
def test_other_items_take_the_general_path(item: dict[str, JsonValue]) -> None:
    assert not items_module._Grouper("openai").add_plain(item)


_SIGNATURE = st.sampled_from(
    [
        None,
        None,
        Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="blob"),
        Opaque(provider="google", format="gemini.thought_signature", data="c2ln"),
    ]
)
_MARKS = st.sampled_from(
    [{}, {}, {}, {"openai-responses": {"~item": {}}}, {"openai-chat": {"x": 1}}, {"other": {}}]
)
_ITEM_ID = st.sampled_from([None, None, "msg_1", "fc_1", "rs_1"])
_TEXT_PART = st.builds(
    TextPart,
    text=_TEXT,
    signature=_SIGNATURE,
    item_id=_ITEM_ID,
    citations=st.sampled_from([(), (), (Citation(url="https://example.com"),)]),
    extra=_MARKS,
)
_PLAIN_TEXT = st.builds(TextPart, text=_TEXT)
_CALL = st.builds(
    ToolCallPart,
    call_id=st.sampled_from(["c", "d"]),
    name=st.sampled_from(["f", "g"]),
    arguments=st.sampled_from(["{}", '{"a": 1}', ""]),
    owner=st.sampled_from(["local", "local", "client", "hosted"]),
    signature=_SIGNATURE,
    item_id=_ITEM_ID,
    extra=_MARKS,
)
_PLAIN_CALL = st.builds(
    ToolCallPart, call_id=st.sampled_from(["c", "d"]), name=_TEXT, arguments=_TEXT
)
_REASONING_PART = st.builds(
    ReasoningPart,
    reasoning_kind=st.sampled_from(["raw", "summary", "encrypted"]),
    text=_TEXT,
    opaque=_SIGNATURE,
    item_id=st.sampled_from([None, None, None, "rs_1"]),
    extra=_MARKS,
)
_OUTPUT = st.one_of(
    _PLAIN_TEXT,
    _TEXT_PART,
    st.builds(JsonPart, value=st.sampled_from([{"a": 1}, [1], "s", None])),
    st.just(MediaPart(media_type="image/png", data="AA==")),
    st.just(MediaPart(media_type="image/png", uri="gs://bucket/a.png")),
)
_RESULT = st.builds(
    ToolResultPart,
    call_id=st.sampled_from(["c", "d"]),
    output=st.lists(st.one_of(_PLAIN_TEXT, _PLAIN_TEXT, _OUTPUT), max_size=2).map(tuple),
    outcome=st.sampled_from(["success", "failed"]),
    item_id=st.sampled_from([None, None, "fco_1"]),
    extra=st.sampled_from([{}, {}, {"openai-responses": {"~output": "list"}}]),
)
_PART = st.one_of(_TEXT_PART, _CALL, _REASONING_PART, _RESULT, _OUTPUT)
_ROLE = st.sampled_from(["system", "developer", "user", "assistant", "tool"])
_MESSAGE_EXTRA = st.sampled_from(
    [{}, {}, {}, {"openai-responses": {"~content": "string"}}, {"openai-chat": {"content": None}}]
)
_PLAIN_REASONING = st.builds(
    ReasoningPart, reasoning_kind=st.sampled_from(["raw", "summary"]), text=_TEXT, extra=_MARKS
)
_PLAIN_MESSAGE = st.one_of(
    st.builds(
        Message,
        role=st.sampled_from(["system", "developer", "user"]),
        parts=st.lists(_PLAIN_TEXT, max_size=2).map(tuple),
    ),
    st.builds(
        Message,
        role=st.just("assistant"),
        parts=st.lists(st.one_of(_PLAIN_TEXT, _PLAIN_CALL, _PLAIN_REASONING), max_size=4).map(
            tuple
        ),
        extra=_MESSAGE_EXTRA,
    ),
    st.builds(
        Message,
        role=st.just("tool"),
        parts=st.lists(
            st.builds(
                ToolResultPart,
                call_id=st.sampled_from(["c", "d"]),
                output=st.lists(_PLAIN_TEXT, max_size=2).map(tuple),
                outcome=st.sampled_from(["success", "failed"]),
                item_id=st.sampled_from([None, "fco_1"]),
            ),
            max_size=2,
        ).map(tuple),
    ),
)
_OPAQUE = [
    Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="blob"),
    Opaque(provider="xai", format=OPENAI_ENCRYPTED_CONTENT, data="blob"),
    Opaque(provider="google", format="gemini.thought_signature", data="c2ln"),
]
_PART_CHANGES: list[tuple[str, object]] = [
    ("item_id", "msg_1"),
    ("item_id", "rs_1"),
    ("extra", {"openai-responses": {"~item": {}}}),
    ("extra", {"openai-responses": {"~empty": True}}),
    ("extra", {"openai-responses": {"~output": "list"}}),
    ("extra", {"other": {}}),
    *(("signature", opaque) for opaque in _OPAQUE),
    *(("opaque", opaque) for opaque in _OPAQUE),
    ("citations", (Citation(url="https://example.com"),)),
    ("citations", (Citation(url=None, title="doc"),)),
    ("logprobs", (TokenLogprob(token="a", logprob=-0.5),)),
    ("owner", "hosted"),
    ("output", (JsonPart(value={"a": 1}),)),
    ("output", (MediaPart(media_type="image/png", uri="gs://bucket/a.png"),)),
    ("output", (TextPart(text="t", extra={"other": {}}),)),
    ("output", (TextPart(text="t", extra={"openai-responses": {"x": 1}}),)),
]
_MESSAGE_CHANGES: list[tuple[str, object]] = [
    ("extra", {"openai-responses": {"~content": "string"}}),
    ("extra", {"openai-responses": {"~instructions": True}}),
    ("id", "m1"),
    ("name", "n"),
    ("role", "user"),
    ("role", "assistant"),
    ("role", "tool"),
    ("parts", (MediaPart(media_type="image/png", data="AA=="),)),
    ("parts", (RefusalPart(text="no"),)),
]


@st.composite
def _near_miss_message(draw: st.DrawFn) -> Message:
    """A plain message with one thing changed: a field of one part (one the part has), or
    of the message."""
    message = draw(_PLAIN_MESSAGE)
    parts = list(message.parts)
    if parts and draw(st.booleans()):
        position = draw(st.integers(0, len(parts) - 1))
        names = {item.name for item in dataclasses.fields(parts[position])}
        changes = [change for change in _PART_CHANGES if change[0] in names]
        name, value = draw(st.sampled_from(changes))
        parts[position] = dataclasses.replace(parts[position], **{name: value})
        return dataclasses.replace(message, parts=tuple(parts))
    name, value = draw(st.sampled_from(_MESSAGE_CHANGES))
    return dataclasses.replace(message, **{name: value})


_CANONICAL = st.one_of(
    _PLAIN_MESSAGE,
    _PLAIN_MESSAGE,
    _near_miss_message(),
    _near_miss_message(),
    st.builds(
        Message,
        role=_ROLE,
        parts=st.lists(_PART, max_size=3).map(tuple),
        id=st.sampled_from([None, None, "m1"]),
        name=st.sampled_from([None, None, "n"]),
        extra=_MESSAGE_EXTRA,
    ),
)
_CONTINUATION = st.sampled_from(
    [
        Continuation(),
        Continuation(store=False),
        Continuation(store=True),
        Continuation(previous_response_id="resp_1"),
    ]
)


def _encoded(request: Request, policy: ReplayPolicy, issuer: str) -> object:
    return encoded(lambda: openai_responses.encode_request(request, policy=policy, issuer=issuer))


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_CANONICAL, min_size=1, max_size=7),
    _CONTINUATION,
    st.sampled_from(["strict", "degrade"]),
    st.sampled_from(["refuse", "drop"]),
    st.sampled_from(["openai", "xai"]),
)
def test_histories_encode_alike_with_and_without_the_fast_path(
    messages: list[Message], continuation: Continuation, mode: Any, foreign: Any, issuer: str
) -> None:
    request = Request(model="m", messages=tuple(messages), continuation=continuation)
    policy = ReplayPolicy(mode=mode, foreign_opaque=foreign)
    fast = _encoded(request, policy, issuer)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encode_module, "plain_items", lambda message, index, context: None)
        assert fast == _encoded(request, policy, issuer)


def test_the_commonest_messages_take_the_encode_fast_path() -> None:
    context = ReplayContext(policy=ReplayPolicy(mode="degrade"), regime="stored", messages=())
    for message in [
        Message(role="user", parts=(TextPart(text="hi"),)),
        Message(role="tool", parts=(ToolResultPart(call_id="c", output=(TextPart(text="r"),)),)),
        Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="raw", text="so"),
                ToolCallPart(call_id="c", name="f", arguments="{}"),
            ),
        ),
    ]:
        assert plain_items(message, 0, context) is not None
    assert [warning.code for warning in context.warnings] == ["reasoning_not_replayable"]


_USAGE_DETAILS = st.one_of(
    st.builds(lambda cached: {"cached_tokens": cached, "cache_write_tokens": 0}, st.integers(0, 9)),
    st.sampled_from(
        [
            {"cached_tokens": 1},
            {"cached_tokens": 0, "cache_write_tokens": 2},
            {"cached_tokens": 0, "cache_write_tokens": False},
            {"cached_tokens": True, "cache_write_tokens": 0},
            {"cached_tokens": None, "cache_write_tokens": 0},
            {},
            None,
            [],
        ]
    ),
)
_USAGE = st.one_of(
    st.builds(
        lambda given, produced, reasoning, details, off, absent: {
            key: value
            for key, value in {
                "input_tokens": given,
                "input_tokens_details": details,
                "output_tokens": produced,
                "output_tokens_details": {"reasoning_tokens": reasoning}
                if reasoning is not None
                else {"reasoning_tokens": 1, "x": 2},
                "total_tokens": given + produced + off,
            }.items()
            if key != absent
        },
        st.integers(0, 99),
        st.integers(0, 99),
        st.one_of(st.none(), st.integers(0, 9), st.just(True)),
        _USAGE_DETAILS,
        st.sampled_from([0, 0, 0, 1]),
        st.sampled_from([None, None, None, "total_tokens", "input_tokens_details", "input_tokens"]),
    ),
    _ODD,
)
"""``usage`` values: the service's shape (the fast path's), near misses of it, odd values."""


def _answer_outcome(body: dict[str, JsonValue], issuer: str) -> object:
    return outcome(lambda: openai_responses.decode_response(body, issuer=issuer))


@settings(max_examples=800, deadline=None)
@given(
    st.lists(_ITEM, max_size=6),
    _optional(_USAGE),
    st.sampled_from(["openai", "xai"]),
    st.sampled_from([{}, {"object": "response", "tools": []}, {"service_tier": "default"}]),
)
def test_answers_decode_alike_with_and_without_the_fast_paths(
    output: list[JsonValue], usage: Any, issuer: str, more: dict[str, JsonValue]
) -> None:
    """An answer's output items (``items_module.plain_output``) and usage
    (``usage_module.plain_usage``) decode as the general paths decode them, errors included."""
    body: dict[str, JsonValue] = _build(
        id="resp_1", status="completed", model="m", output=output, usage=usage, **more
    )
    fast = _answer_outcome(body, issuer)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(items_module, "plain_output", lambda data, last, issuer: None)
        patch.setattr(usage_module, "plain_usage", lambda value: None)
        assert fast == _answer_outcome(body, issuer)


def test_the_commonest_answer_takes_the_decode_fast_paths() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "b"}
    message = {
        "id": "msg_1",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "done", "annotations": []}],
    }
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    for item in (reasoning, message, call):
        assert items_module.plain_output(item, None, "openai") is not None
    usage = {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 1},
        "total_tokens": 8,
    }
    assert usage_module.plain_usage(usage) is not None
