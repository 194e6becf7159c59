"""The Chat codec's fast paths give exactly what its general paths give.

Generated wire messages, canonical messages and chunks of the shapes a fast path takes, and of near-miss shapes
(one key more, a null where a string goes, a wrong type, malformed arguments), are
decoded with the fast path and with it switched off: the results (or errors) are equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import (
    REASONING_DIALECTS,
    ReasoningDialect,
    StreamDecoder,
    decode_request,
    encode_request,
)
from interlock.codecs.openai_chat import _message_decode as message_decode
from interlock.codecs.openai_chat import _message_encode as message_encode
from interlock.codecs.openai_chat import _stream_decode as stream_decode
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    Citation,
    DecodeError,
    JsonObject,
    JsonPart,
    JsonValue,
    LossyHistoryError,
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

_TEXT = st.text(max_size=8)
_ID = st.sampled_from(["c", "d"])  # few ids: results meet the calls they answer
_ARGUMENTS = st.sampled_from(['{"city": "Paris"}', "", "  ", "{", "[1, 2]", "NaN", '{"a": 1}x'])
_ODD = st.sampled_from([None, 1, True, [], {}, "", "x", 0.5])
_ABSENT = object()
"""A key left out of a generated object."""


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), value, _ODD)


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


_FUNCTION = st.builds(_build, name=_maybe(_TEXT), arguments=_maybe(_ARGUMENTS), extra=_maybe(_TEXT))
_CALL = st.builds(
    _build,
    id=_maybe(_ID),
    type=st.sampled_from([_ABSENT, "function", "custom", None]),
    function=st.one_of(_FUNCTION, _ODD),
    extra_content=st.sampled_from([_ABSENT, {"google": {"thought_signature": "s"}}]),
)
_WIDE_MESSAGE = st.builds(
    _build,
    role=st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "x", 1]),
    content=st.one_of(
        st.just(_ABSENT), _TEXT, _ODD, st.just([{"type": "text", "text": "hi"}]), st.just({})
    ),
    name=st.sampled_from([_ABSENT, "n", None]),
    tool_call_id=_maybe(_ID),
    reasoning_content=_maybe(_TEXT),
    tool_calls=st.one_of(st.just(_ABSENT), st.lists(st.one_of(_CALL, _ODD), max_size=3), _ODD),
    refusal=st.sampled_from([_ABSENT, None, "no"]),
)
_PLAIN_CALL = st.builds(
    lambda call_id, name, arguments: {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    },
    _ID,
    st.sampled_from(["f", "g"]),
    _ARGUMENTS,
)
_COMMON_MESSAGE = st.one_of(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["system", "developer", "user", "assistant"]),
        _TEXT,
    ),
    st.builds(
        lambda call_id, content: {"role": "tool", "tool_call_id": call_id, "content": content},
        _ID,
        _TEXT,
    ),
    st.builds(
        _build,
        role=st.just("assistant"),
        content=st.one_of(st.none(), _TEXT),
        reasoning_content=st.one_of(st.just(_ABSENT), _TEXT),
        tool_calls=st.lists(_PLAIN_CALL, min_size=1, max_size=3),
    ),
)


@st.composite
def _near_miss(draw: st.DrawFn) -> JsonValue:
    """A common message with one thing changed: a key set to an odd value or removed,
    anywhere in it (calls and their functions included)."""
    message: Any = json.loads(json.dumps(draw(_COMMON_MESSAGE)))
    objects = [message]
    for call in message.get("tool_calls", []):
        objects += [call, call["function"]]
    target = draw(st.sampled_from(objects))
    key = draw(st.sampled_from([*target, "name", "extra", "refusal"]))
    if draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = draw(_ODD)
    return message


_MESSAGE = st.one_of(_COMMON_MESSAGE, _near_miss(), _WIDE_MESSAGE)


def _outcome(action: Callable[[], object]) -> object:
    try:
        return action()
    except DecodeError as error:
        return ("DecodeError", error.path, str(error))


def general_only(action: Callable[[], object]) -> object:
    """The outcome of ``action`` with every Chat fast path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(message_decode, "common_message", lambda item, names: None)
        patch.setattr(stream_decode, "plain_delta", lambda chunk: None)
        return _outcome(action)


@settings(max_examples=600, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=6))
def test_a_history_decodes_alike_with_and_without_the_fast_path(messages: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"model": "m", "messages": messages}
    assert _outcome(lambda: decode_request(body)) == general_only(lambda: decode_request(body))


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi", "name": "n"},  # one key more
        {"role": "user", "content": None},
        {"role": "tool", "content": "r", "tool_call_id": 1},
        {"role": "tool", "content": ["r"], "tool_call_id": "c"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {  # no content key
            "role": "assistant",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
        },
        {"role": "assistant", "content": None, "reasoning_content": None, "tool_calls": [{}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}
            ],
        },
    ],
)
def test_near_miss_messages_take_the_general_path(message: JsonValue) -> None:
    assert message_decode.common_message(message, {}) is None


def test_common_messages_take_the_fast_path() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    for message in [
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": "r", "tool_call_id": "c"},
        {"role": "assistant", "content": None, "reasoning_content": "t", "tool_calls": [call]},
    ]:
        assert message_decode.common_message(message, {}) is not None


_HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def _chunk(delta: JsonValue, **fields: JsonValue) -> str:
    choice: dict[str, JsonValue] = {"index": 0, "delta": delta, "finish_reason": None}
    choice.update({k: v for k, v in fields.items() if k in ("index", "finish_reason", "logprobs")})
    chunk: dict[str, JsonValue] = {**_HEAD, "choices": [choice]}
    chunk.update({k: v for k, v in fields.items() if k in ("usage", "x_groq", "error")})
    return json.dumps(chunk)


_CALL_DELTA = st.builds(
    _build,
    index=st.sampled_from([_ABSENT, 0, 1, False, 0.0, "0"]),
    id=_maybe(_TEXT),
    type=st.sampled_from([_ABSENT, "function", "custom"]),
    function=st.one_of(st.builds(_build, name=_maybe(_TEXT), arguments=_maybe(_ARGUMENTS)), _ODD),
    custom=st.sampled_from([_ABSENT, {"input": "x"}]),
)
_DELTA = st.builds(
    _build,
    role=st.sampled_from([_ABSENT, "assistant", None]),
    content=_maybe(_TEXT),
    reasoning_content=_maybe(_TEXT),
    reasoning=_maybe(_TEXT),
    refusal=st.sampled_from([_ABSENT, None, "no"]),
    tool_calls=st.one_of(st.just(_ABSENT), st.lists(_CALL_DELTA, max_size=2), _ODD),
    annotations=st.sampled_from([_ABSENT, None, []]),
    other=_maybe(_TEXT),
)
_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "index": st.sampled_from([0, 1, False, 0.0]),
        "finish_reason": st.sampled_from([None, "stop", "tool_calls"]),
        "logprobs": st.none(),
        "usage": st.sampled_from([None, {"prompt_tokens": 1, "completion_tokens": 2}]),
        "x_groq": st.sampled_from([{"id": "x"}, {"usage": {"prompt_tokens": 1}}]),
        "error": st.sampled_from([None, {"message": "boom"}]),
    },
)


_WIDE_CHUNK = st.builds(lambda delta, fields: _chunk(delta, **fields), _DELTA, _FIELDS)
_PIECE = st.sampled_from(["a", " ", "{", "é"])
_COMMON_DELTA = st.one_of(
    st.builds(lambda text: {"content": text}, _PIECE),
    st.builds(
        lambda text, key: {key: text}, _PIECE, st.sampled_from(["reasoning_content", "reasoning"])
    ),
    st.builds(
        lambda piece, index: {"tool_calls": [{"index": index, "function": {"arguments": piece}}]},
        _PIECE,
        st.sampled_from([0, 1]),
    ),
)


_USAGE = {"prompt_tokens": 1, "completion_tokens": 2}
_ADDED: tuple[dict[str, JsonValue], ...] = (
    {"usage": _USAGE, "error": {"message": "boom"}, "x_groq": {"usage": _USAGE}},
    {"finish_reason": "stop", "index": 1},
    {
        "refusal": "no",
        "annotations": [{"type": "url_citation"}],
        "reasoning_content": "r",
        "reasoning": "r",
        "content": "c",
        "extra_content": {"google": {"thought_signature": "s"}},
    },
    {"type": "custom", "custom": {"input": "x"}, "index": 1, "extra_content": {}},
    {"arguments": "b", "input": "x"},
)
"""Keys a near-miss chunk's chunk, choice, delta, call and function may gain, with values
the general path acts on."""


@st.composite
def _near_miss_chunk(draw: st.DrawFn) -> str:
    """A common chunk with one thing changed anywhere in it (chunk, choice, delta, call,
    function): a key removed, set to an odd value, or one of :data:`_ADDED` added."""
    chunk: Any = json.loads(_chunk(draw(_COMMON_DELTA)))
    choice = chunk["choices"][0]
    objects = [chunk, choice, choice["delta"]]
    for call in choice["delta"].get("tool_calls", []):
        objects += [call, call["function"]]
    level = draw(st.integers(min_value=0, max_value=len(objects) - 1))
    target = objects[level]
    change = draw(st.sampled_from(["remove", "odd", "add", "add"]))
    if change == "add":
        key = draw(st.sampled_from(sorted(_ADDED[level])))
        target[key] = _ADDED[level][key]
    else:
        key = draw(st.sampled_from(sorted(target)))
        if change == "remove":
            del target[key]
        else:
            target[key] = draw(_ODD)
    return json.dumps(chunk)


_CHUNK = st.one_of(
    st.builds(_chunk, _COMMON_DELTA), _near_miss_chunk(), _near_miss_chunk(), _WIDE_CHUNK
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_CHUNK, max_size=12), st.booleans())
def test_a_stream_decodes_alike_with_and_without_the_fast_path(
    chunks: list[str], done: bool
) -> None:
    opening = [_chunk({"role": "assistant", "content": ""}), _chunk({"content": "Hi"})]
    call = {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
    opening.append(_chunk({"tool_calls": [call]}))
    opening.append(_chunk({"reasoning_content": "so"}))
    lines = opening + chunks + (["[DONE]"] if done else [])

    def decode() -> object:
        decoder = StreamDecoder()
        updates = [decoder.feed(SseEvent(data=line)) for line in lines]
        return [*updates, decoder.finish()]

    assert _outcome(decode) == general_only(decode)


def test_plain_chunks_take_the_fast_path() -> None:
    decoder = StreamDecoder()
    call = {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
    for line in [_chunk({"content": "Hi"}), _chunk({"tool_calls": [call]})]:
        decoder.feed(SseEvent(data=line))
    piece = {"index": 0, "function": {"arguments": "{"}}
    assert stream_decode.plain_delta(json.loads(_chunk({"content": "more"}))) is not None
    assert stream_decode.plain_delta(json.loads(_chunk({"tool_calls": [piece]}))) is not None
    near_misses = [
        _chunk({"content": "x"}, finish_reason="stop"),
        _chunk({"content": "x"}, usage={"prompt_tokens": 1}),
        _chunk({"content": "x"}, index=False),
        _chunk({"content": "x", "refusal": "no"}),
        _chunk({"content": ""}),
        _chunk({"tool_calls": [{**piece, "custom": {}}]}),
    ]
    for line in near_misses:
        assert stream_decode.plain_delta(json.loads(line)) is None


_EXTRAS: list[dict[str, JsonObject]] = [
    {"openai-chat": {"x": 1}},
    {"openai-chat:layout": {"content": "parts"}},
    {"openai-chat:layout": {"role": "function"}},
]
_OUTPUT = st.one_of(
    st.builds(TextPart, text=_TEXT),
    st.builds(TextPart, text=_TEXT, extra=st.just({"openai-chat": {"x": 1}})),
    st.builds(JsonPart, value=st.just({"a": 1})),
    st.builds(MediaPart, uri=st.just("https://example.com/a.png")),
)
_TEXT_VARIANT = st.one_of(
    st.builds(TextPart, text=_TEXT, item_id=st.just("i")),
    st.builds(
        TextPart,
        text=_TEXT,
        signature=st.just(Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="s")),
    ),
    st.builds(TextPart, text=_TEXT, citations=st.just((Citation(url="https://example.com"),))),
    st.builds(
        TextPart,
        text=_TEXT,
        extra=st.sampled_from(
            [{"openai-chat": {"x": 1}}, {"openai-chat:layout": {"carrier": True}}]
        ),
    ),
)
"""Text parts a fast path does not take (but the general path may ignore the difference)."""
_PART = st.one_of(
    st.builds(TextPart, text=_TEXT),
    _TEXT_VARIANT,
    st.builds(ToolResultPart, call_id=_ID, output=st.lists(_OUTPUT, max_size=3).map(tuple)),
    st.builds(
        ToolResultPart,
        call_id=_ID,
        output=st.just((TextPart(text="r"),)),
        outcome=st.just("failed"),
    ),
    st.builds(ToolCallPart, call_id=_ID, name=st.just("f"), arguments=st.just("{}")),
    st.builds(ReasoningPart, reasoning_kind=st.just("raw"), text=_TEXT),
)
_CANONICAL = st.builds(
    Message,
    role=st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
    parts=st.one_of(st.lists(_PART, min_size=1, max_size=1), st.lists(_PART, max_size=3)).map(
        tuple
    ),
    name=st.sampled_from([None, "n"]),
    extra=st.sampled_from([{}, {}, *_EXTRAS]),
)


_PLAIN_CANONICAL = st.one_of(
    st.builds(
        lambda role, text: Message(role=role, parts=(TextPart(text=text),)),
        st.sampled_from(["system", "developer", "user", "assistant"]),
        _TEXT,
    ),
    st.builds(
        lambda call_id, texts: Message(
            role="tool",
            parts=(ToolResultPart(call_id=call_id, output=tuple(TextPart(text=t) for t in texts)),),
        ),
        _ID,
        st.lists(_TEXT, max_size=3),
    ),
)


@st.composite
def _near_miss_canonical(draw: st.DrawFn) -> Message:
    """A plain message with one thing changed: its role, name or extra, a part more, the
    part's signature, citations or extra, or a non-text tool output."""
    message = draw(_PLAIN_CANONICAL)
    part = message.parts[0]
    change = draw(st.sampled_from(["role", "name", "extra", "more", "part"]))
    if change == "role":
        return replace(message, role=draw(st.sampled_from(["user", "assistant", "tool"])))
    if change == "name":
        return replace(message, name="n")
    if change == "extra":
        return replace(message, extra=draw(st.sampled_from(_EXTRAS)))
    if change == "more":
        return replace(message, parts=(part, draw(_PART)))
    if isinstance(part, ToolResultPart):
        output = (*part.output, draw(_OUTPUT))
        return replace(message, parts=(replace(part, output=output),))
    return replace(message, parts=(draw(_TEXT_VARIANT),))


_MESSAGES = st.one_of(_PLAIN_CANONICAL, _near_miss_canonical(), _CANONICAL)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(_MESSAGES, min_size=1, max_size=5),
    st.sampled_from([None, *REASONING_DIALECTS]),
    st.sampled_from(["strict", "degrade"]),
)
def test_a_history_encodes_alike_with_and_without_the_fast_path(
    messages: list[Message], dialect: ReasoningDialect | None, mode: ReplayMode
) -> None:
    request = Request(model="m", messages=tuple(messages))
    policy = ReplayPolicy(mode=mode)

    def encode() -> object:
        try:
            return encode_request(request, policy=policy, reasoning_dialect=dialect)
        except LossyHistoryError as error:
            return ("LossyHistoryError", error.location, error.code, str(error))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(message_encode, "plain_wire", lambda message: None)
        general = encode()
    assert encode() == general
