"""``cannot_refuse``: when it says Chat's encoder cannot refuse a request, the encoder does
not refuse it, under any policy and reasoning dialect; each shape it turns away is one the
encoder can refuse (so none of its conditions is idle)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs.openai_chat import REASONING_DIALECTS, ReasoningDialect, encode_request
from interlock.codecs.openai_chat._replay_check import cannot_refuse
from interlock.transcript import (
    Citation,
    Continuation,
    GenerationOptions,
    HostedToolPart,
    HostedToolSpec,
    LossyHistoryError,
    MediaPart,
    Message,
    Opaque,
    ReasoningPart,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

_TEXT = st.text(max_size=6)
_EXTRA = st.sampled_from([{}, {"openai-chat": {"x": 1}}, {"anthropic": {"cache_control": {}}}])
_TEXT_PART = st.builds(
    TextPart,
    text=_TEXT,
    signature=st.sampled_from([None, None, "sig"]),
    citations=st.sampled_from([(), (), (Citation(url="https://a.example"),)]),
    extra=_EXTRA,
)
_OPAQUE = st.sampled_from(
    [
        None,
        Opaque(provider="anthropic", format="signature", data="s"),
        Opaque(provider="openrouter", format="reasoning_detail", data="d"),
    ]
)
_PART = st.one_of(
    _TEXT_PART,
    _TEXT_PART,
    st.builds(
        ReasoningPart,
        reasoning_kind=st.sampled_from(["raw", "summary", "encrypted"]),
        text=_TEXT,
        opaque=_OPAQUE,
    ),
    st.builds(ToolCallPart, call_id=st.sampled_from(["c", "d"]), name=st.just("f")),
    st.builds(
        ToolResultPart,
        call_id=st.sampled_from(["c", "d"]),
        output=st.sampled_from([(TextPart(text="r"),), (MediaPart(uri="https://a/i.png"),)]),
    ),
    st.just(MediaPart(media_type="image/png", uri="https://a.example/i.png")),
    st.just(HostedToolPart(provider="openai-responses", item_type="web_search_call", item={})),
)
_MESSAGE = st.builds(
    Message,
    role=st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
    parts=st.lists(_PART, max_size=3).map(tuple),
    name=st.sampled_from([None, None, "n"]),
    extra=_EXTRA,
)
_HOSTED = st.builds(
    HostedToolSpec,
    provider=st.sampled_from(["openai-chat", "openrouter", "openai-responses", "anthropic"]),
    spec=st.just({"type": "web_search"}),
)
_REQUEST = st.builds(
    Request,
    model=st.just("m"),
    messages=st.lists(_MESSAGE, max_size=4).map(tuple),
    tools=st.sampled_from([(), (ToolSpec(name="f", parameters={"type": "object"}),)]),
    hosted_tools=st.lists(_HOSTED, max_size=2).map(tuple),
    continuation=st.sampled_from(
        [Continuation(), Continuation(previous_response_id="r"), Continuation(conversation_id="v")]
    ),
    options=st.sampled_from(
        [
            GenerationOptions(),
            GenerationOptions(thinking_budget=1024, reasoning_summary="auto"),
            GenerationOptions(top_logprobs=2, candidate_count=3, top_k=4),
        ]
    ),
    extra=st.sampled_from([{}, {"openai-chat": {"store": True}}, {"gemini": {"x": 1}}]),
)
_POLICY = st.builds(
    ReplayPolicy,
    mode=st.sampled_from(["strict", "degrade"]),
    foreign_opaque=st.sampled_from(["drop", "refuse"]),
    signatures_required=st.sampled_from([None, True, False]),
)
_DIALECT = st.sampled_from([None, *REASONING_DIALECTS])


def _plain(request: Request) -> Request:
    """``request`` with every message one plain text part: ``cannot_refuse`` holds for it
    unless a continuation or another provider's hosted tool stands in the way."""
    messages = tuple(
        Message(role="user" if m.role == "tool" else m.role, parts=(TextPart(text="t"),))
        for m in request.messages
    )
    return replace(request, messages=messages)


@settings(max_examples=800, deadline=None)
@given(_REQUEST, _POLICY, _DIALECT, st.booleans())
def test_the_encoder_never_refuses_what_cannot_refuse_lets_through(
    request: Request, policy: ReplayPolicy, dialect: ReasoningDialect | None, plain: bool
) -> None:
    if plain:  # half the examples in the shapes it lets through
        request = _plain(request)
    if cannot_refuse(request):
        encode_request(request, policy=policy, reasoning_dialect=dialect)


def _text(role: str, **fields: Any) -> Message:
    return Message(role=role, parts=(TextPart(text="t"),), **fields)


_CALL = Message(role="assistant", parts=(ToolCallPart(call_id="c", name="f"),))
_RESULT = Message(role="tool", parts=(ToolResultPart(call_id="c", output=(TextPart(text="r"),)),))
_STRICT = ReplayPolicy(mode="strict", foreign_opaque="refuse")


@pytest.mark.parametrize(
    ("request_", "dialect"),
    [
        (Request(model="m", messages=(_RESULT,)), None),  # an orphan tool message
        (Request(model="m", messages=(_text("user"), _CALL)), None),  # a call left unanswered
        (
            Request(
                model="m",
                messages=(_text("user"),),
                continuation=Continuation(previous_response_id="r"),
            ),
            None,
        ),
        (
            Request(
                model="m",
                messages=(_text("user"),),
                hosted_tools=(HostedToolSpec(provider="anthropic", spec={"type": "x"}),),
            ),
            None,
        ),
        (
            Request(
                model="m",
                messages=(
                    Message(
                        role="user",
                        parts=(HostedToolPart(provider="anthropic", item_type="x", item={}),),
                    ),
                ),
            ),
            None,
        ),
        (
            Request(
                model="m",
                messages=(
                    Message(
                        role="assistant",
                        parts=(
                            ReasoningPart(
                                reasoning_kind="encrypted",
                                opaque=Opaque(provider="anthropic", format="signature", data="s"),
                            ),
                            TextPart(text="t"),
                        ),
                    ),
                ),
            ),
            "reasoning_content",
        ),
    ],
)
def test_what_it_turns_away_the_encoder_can_refuse(
    request_: Request, dialect: ReasoningDialect | None
) -> None:
    assert not cannot_refuse(request_)
    with pytest.raises(LossyHistoryError):
        encode_request(request_, policy=_STRICT, reasoning_dialect=dialect)


@pytest.mark.parametrize(
    "message",
    [
        _text("user", name="n"),
        _text("user", extra={"openai-chat": {"x": 1}}),
        Message(role="user", parts=(TextPart(text="a"), TextPart(text="b"))),
        Message(role="user", parts=()),
        Message(role="assistant", parts=(TextPart(text="t", signature="s"),)),
        Message(role="assistant", parts=(TextPart(text="t", citations=(Citation(url="u"),)),)),
        Message(role="user", parts=(TextPart(text="t", extra={"openai-chat": {"x": 1}}),)),
        Message(role="user", parts=(MediaPart(uri="https://a.example/i.png"),)),
        _RESULT,
    ],
)
def test_every_other_message_shape_takes_the_full_check(message: Message) -> None:
    assert not cannot_refuse(Request(model="m", messages=(_text("system"), message)))


def test_plain_text_histories_skip_the_check() -> None:
    roles = ("system", "developer", "user", "assistant", "user")
    hosted = (HostedToolSpec(provider="openrouter", spec={"type": "web_search"}),)
    request = Request(model="m", messages=tuple(_text(role) for role in roles), hosted_tools=hosted)
    assert cannot_refuse(request)
