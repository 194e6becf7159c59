"""The Chat answer encoder's fast path (``_plain_answer``) writes exactly what the general
path writes: generated responses of its shape (text, tool calls, summary and encrypted
reasoning, with and without usage), near misses of it (a signature, citations,
log-probabilities, an ``extra`` on a part, the message or the response, raw or OpenRouter
reasoning, a refusal or hosted part, a breakdown, alternatives, a name) and wide random ones
are encoded for every reasoning dialect with it and with it switched off: the bodies are
equal, key order included."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import openai_chat
from interlock.codecs.openai_chat import _response as response_module
from interlock.codecs.openai_chat._plain_answer import plain_answer
from interlock.transcript import (
    OPENAI_ENCRYPTED_CONTENT,
    Alternative,
    Citation,
    HostedToolPart,
    Message,
    ModelUsage,
    Opaque,
    ReasoningPart,
    RefusalPart,
    Response,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    Usage,
)

_TEXT = st.text(max_size=5)
_DETAIL = {"type": "reasoning.summary", "summary": "s", "format": "f", "index": 0}
_OPAQUE = st.sampled_from(
    [
        None,
        None,
        Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="blob"),
        Opaque(provider="openrouter", format="openrouter.reasoning_detail", data=_DETAIL),
        Opaque(provider="google", format="gemini.thought_signature", data="c2ln"),
    ]
)
_EXTRA = st.sampled_from(
    [
        {},
        {},
        {},
        {"openai-responses": {"~item": {}}},
        {"openai-chat": {"x": 1}},
        {"openai-chat:layout": {"carrier": "reasoning_content"}},
        {"openai-chat:layout": {"content": "parts"}},
    ]
)
_PLAIN_PART = st.one_of(
    st.builds(TextPart, text=_TEXT, item_id=st.sampled_from([None, "msg_1"])),
    st.builds(
        ToolCallPart,
        call_id=st.sampled_from(["c", "d"]),
        name=st.sampled_from(["f", "g"]),
        arguments=st.sampled_from(["{}", '{"a": 1}', ""]),
        owner=st.sampled_from(["local", "client", "hosted"]),
    ),
    st.builds(
        ReasoningPart,
        reasoning_kind=st.sampled_from(["summary", "encrypted"]),
        text=_TEXT,
        opaque=st.sampled_from(
            [None, Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="b")]
        ),
        item_id=st.sampled_from([None, "rs_1"]),
    ),
)
_WIDE_PART = st.one_of(
    st.builds(
        TextPart,
        text=_TEXT,
        signature=_OPAQUE,
        citations=st.sampled_from([(), (Citation(url="https://example.com"),)]),
        logprobs=st.sampled_from([(), (TokenLogprob(token="a", logprob=-0.5),)]),
        extra=_EXTRA,
    ),
    st.builds(
        ToolCallPart,
        call_id=st.just("c"),
        name=st.just("f"),
        arguments=st.just("{}"),
        signature=_OPAQUE,
        extra=_EXTRA,
    ),
    st.builds(
        ReasoningPart,
        reasoning_kind=st.sampled_from(["raw", "summary", "encrypted"]),
        text=_TEXT,
        opaque=_OPAQUE,
        extra=_EXTRA,
    ),
    st.builds(RefusalPart, text=_TEXT),
    st.just(HostedToolPart(provider="openai", item_type="web_search_call", item={"id": "w"})),
)
_USAGE = st.one_of(
    st.none(),
    st.builds(
        Usage,
        input_tokens=st.integers(0, 9),
        output_tokens=st.integers(0, 9),
        reasoning_tokens=st.integers(0, 3),
        cached_input_tokens=st.integers(0, 3),
        tool_prompt_tokens=st.sampled_from([0, 0, 2]),
        breakdown=st.sampled_from([(), (), (ModelUsage(model="m", usage=Usage(input_tokens=1)),)]),
        extra=st.sampled_from(
            [{}, {}, {"openai-chat": {"cost": 1}}, {"openai-chat:layout": {"null_counts": []}}]
        ),
    ),
)
_RESPONSE_EXTRA = st.sampled_from(
    [
        {},
        {},
        {"openai-responses": {"service_tier": "default"}},
        {"openai-chat": {"system_fingerprint": "fp"}},
        {"openai-chat:layout": {"more_choices": []}},
    ]
)


_PART_CHANGES: list[tuple[str, object]] = [
    ("signature", Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="blob")),
    ("signature", Opaque(provider="google", format="gemini.thought_signature", data="c2ln")),
    ("citations", (Citation(url="https://example.com"),)),
    ("logprobs", (TokenLogprob(token="a", logprob=-0.5),)),
    ("reasoning_kind", "raw"),
    ("opaque", Opaque(provider="openrouter", format="openrouter.reasoning_detail", data=_DETAIL)),
    ("extra", {"openai-responses": {"~item": {}}}),
    ("extra", {"openai-chat": {"x": 1}}),
    ("extra", {"openai-chat:layout": {"carrier": "reasoning_content"}}),
    ("extra", {"openai-chat:layout": {"carrier": "thinking"}}),
]
_CHANGES: list[tuple[str, str, object]] = [
    ("message", "name", "n"),
    ("message", "extra", {"openai-chat:layout": {"content": "absent"}}),
    ("message", "extra", {"openai-chat": {"content": None}}),
    ("message", "parts", (RefusalPart(text="no"),)),
    ("message", "parts", (HostedToolPart(provider="openai", item_type="x", item={"id": "w"}),)),
    ("response", "extra", {"openai-chat": {"system_fingerprint": "fp"}}),
    ("response", "extra", {"openai-chat:layout": {"more_choices": []}}),
    ("response", "usage", Usage(breakdown=(ModelUsage(model="m", usage=Usage()),))),
    ("response", "usage", Usage(input_tokens=1, extra={"openai-chat": {"cost": 1}})),
    (
        "response",
        "alternatives",
        (Alternative(message=Message(role="assistant", parts=(TextPart(text="b"),))),),
    ),
]


@st.composite
def _responses(draw: st.DrawFn) -> Response:
    """A response of the fast path's shape, often with one thing changed (a field of one
    part, of the message or of the response), sometimes with wide random parts."""
    parts = draw(st.lists(_PLAIN_PART, max_size=4))
    if draw(st.integers(0, 5)) == 0:
        parts += draw(st.lists(_WIDE_PART, min_size=1, max_size=2))
    response = Response(
        message=Message(role="assistant", parts=tuple(parts)),
        id=draw(st.sampled_from([None, "", "resp_1"])),
        model=draw(st.sampled_from([None, "", "m"])),
        created=draw(st.sampled_from([None, 0, 17])),
        finish_reason=draw(st.sampled_from([None, "stop", "tool_calls", "length"])),
        native_finish_reason=draw(st.sampled_from([None, "completed", "stop", "STOP"])),
        usage=draw(_USAGE),
        extra=draw(st.sampled_from([{}, {"openai-responses": {"service_tier": "default"}}])),
    )
    change = draw(st.integers(0, 2))
    if change == 1 and parts:
        position = draw(st.integers(0, len(parts) - 1))
        names = {item.name for item in dataclasses.fields(parts[position])}
        name, value = draw(st.sampled_from([c for c in _PART_CHANGES if c[0] in names]))
        parts[position] = dataclasses.replace(parts[position], **{name: value})
        message = dataclasses.replace(response.message, parts=tuple(parts))
        return dataclasses.replace(response, message=message)
    if change == 2:
        where, name, value = draw(st.sampled_from(_CHANGES))
        if where == "message":
            message = dataclasses.replace(response.message, **{name: value})
            return dataclasses.replace(response, message=message)
        return dataclasses.replace(response, **{name: value})
    return response


_DIALECTS = st.sampled_from(
    [None, "reasoning_content", "reasoning", "openrouter", "gemini-compat", "none"]
)


def _encoded(response: Response, dialect: Any) -> str:
    return json.dumps(openai_chat.encode_response(response, reasoning_dialect=dialect))


@settings(max_examples=800, deadline=None)
@given(_responses(), _DIALECTS)
def test_answers_encode_alike_with_and_without_the_fast_path(
    response: Response, dialect: Any
) -> None:
    fast = _encoded(response, dialect)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(response_module, "plain_answer", lambda response, dialect: None)
        assert fast == _encoded(response, dialect)


_BASE_PARTS = (
    ReasoningPart(reasoning_kind="summary", text="s"),
    TextPart(text="t"),
    ToolCallPart(call_id="c", name="f", arguments="{}"),
)


@pytest.mark.parametrize("dialect", [None, "reasoning_content", "openrouter", "gemini-compat"])
@pytest.mark.parametrize("change", range(len(_PART_CHANGES) + len(_CHANGES)))
def test_each_near_miss_encodes_alike(change: int, dialect: Any) -> None:
    """Every change of :data:`_PART_CHANGES` (on each part that has the field) and
    :data:`_CHANGES`, one at a time, on an answer of the fast path's shape."""
    response = Response(
        message=Message(role="assistant", parts=_BASE_PARTS),
        usage=Usage(input_tokens=2, output_tokens=1),
    )
    variants: list[Response] = []
    if change < len(_PART_CHANGES):
        name, value = _PART_CHANGES[change]
        for position, part in enumerate(_BASE_PARTS):
            if name in {item.name for item in dataclasses.fields(part)}:
                parts = list(_BASE_PARTS)
                parts[position] = dataclasses.replace(part, **{name: value})
                message = dataclasses.replace(response.message, parts=tuple(parts))
                variants.append(dataclasses.replace(response, message=message))
    else:
        where, name, value = _CHANGES[change - len(_PART_CHANGES)]
        if where == "message":
            message = dataclasses.replace(response.message, **{name: value})
            variants.append(dataclasses.replace(response, message=message))
        else:
            variants.append(dataclasses.replace(response, **{name: value}))
    for variant in variants:
        fast = _encoded(variant, dialect)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(response_module, "plain_answer", lambda response, dialect: None)
            assert fast == _encoded(variant, dialect)


def test_the_commonest_answers_take_the_fast_path() -> None:
    encrypted = Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="b")
    for parts in [
        (ReasoningPart(reasoning_kind="encrypted", opaque=encrypted), TextPart(text="done")),
        (ToolCallPart(call_id="c", name="f", arguments="{}"),),
    ]:
        response = Response(
            message=Message(role="assistant", parts=parts),
            id="resp_1",
            finish_reason="stop",
            usage=Usage(input_tokens=3, output_tokens=2),
        )
        for dialect in (None, "reasoning_content"):
            assert plain_answer(response, dialect) is not None


def test_other_answers_take_the_general_path() -> None:
    raw = Response(
        message=Message(role="assistant", parts=(ReasoningPart(reasoning_kind="raw", text="r"),))
    )
    assert plain_answer(raw, "reasoning_content") is None
    assert plain_answer(Response(message=Message(role="assistant", parts=())), "openrouter") is None
