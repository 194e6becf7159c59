"""The versioned transcript serialization."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.transcript import (
    Alternative,
    ApprovalRequestPart,
    JsonPart,
    Message,
    Opaque,
    ReasoningPart,
    Response,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    ToolResultPart,
    TranscriptFormatError,
    dump_response,
    dump_transcript,
    load_response,
    load_transcript,
    to_json,
)

FIXTURES = Path(__file__).parent / "fixtures"

SIGNATURE = Opaque(provider="google", format="gemini.thought_signature", data="CiIB4/H/Xk==")


def sample() -> tuple[Message, ...]:
    call = ToolCallPart(
        call_id="call_1",
        occurrence_id="occ_1",
        name="get_weather",
        arguments='{"city": "Paris"}',
        signature=SIGNATURE,
    )
    return (
        Message(role="user", parts=(TextPart(text="Weather in Paris?"),)),
        Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="summary", text="Looking it up", item_id="rs_1"),
                ReasoningPart(
                    reasoning_kind="encrypted",
                    item_id="rs_1",
                    opaque=Opaque(
                        provider="openai", format="openai.responses.encrypted_content", data="gAAA"
                    ),
                ),
                call,
                TextPart(text="", signature=SIGNATURE, extra={"gemini": {"x": 1}}),
            ),
        ),
        Message(
            role="tool",
            parts=(
                ToolResultPart(
                    call_id="call_1",
                    occurrence_id="occ_1",
                    output=(JsonPart(value={"temp_c": 15}),),
                ),
            ),
        ),
        Message(role="assistant", parts=(ApprovalRequestPart(approval_id="ap_1", call=call),)),
    )


def test_round_trip_is_exact() -> None:
    messages = sample()
    document = json.loads(json.dumps(dump_transcript(messages)))
    assert load_transcript(document) == messages


def test_stored_v1_fixture_still_loads() -> None:
    document = json.loads((FIXTURES / "transcript_v1.json").read_text())
    assert load_transcript(document) == sample()


def test_argument_text_is_kept_byte_for_byte() -> None:
    loaded = load_transcript(dump_transcript(sample()))
    call = loaded[1].tool_calls[0]
    assert call.arguments == '{"city": "Paris"}'
    assert call.parsed_arguments == {"city": "Paris"}


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"version": 99, "messages": []}, "version"),
        ({"version": 1, "messages": [{"role": "user", "parts": [{"kind": "nope"}]}]}, "kind"),
        ({"version": 1, "messages": "x"}, "messages"),
        ({"version": 1, "messages": [{"role": "user", "parts": [{"kind": "text"}]}]}, "parts[0]"),
    ],
)
def test_malformed_documents_name_the_place(document: object, where: str) -> None:
    with pytest.raises(TranscriptFormatError, match=where.replace("[", r"\[").replace("]", r"\]")):
        load_transcript(document)


def test_tokens_and_alternatives_round_trip() -> None:
    token = TokenLogprob(
        token="Hi", logprob=-0.1, bytes=(72, 105), top=(TokenLogprob(token="Yo", logprob=-2.0),)
    )
    response = Response(
        message=Message(role="assistant", parts=(TextPart(text="Hi", logprobs=(token,)),)),
        alternatives=(
            Alternative(
                message=Message(role="assistant", parts=(TextPart(text="Yo"),)),
                finish_reason="stop",
            ),
        ),
    )
    assert load_response(json.loads(json.dumps(dump_response(response)))) == response


def _general_to_json(value: object) -> object:
    """The general path :func:`to_json` takes per dataclass field (its plan precomputes
    the same choices): ``kind`` always, any other field unless it equals its default."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, object] = {}
        for spec in dataclasses.fields(value):
            item = getattr(value, spec.name)
            if spec.name != "kind" and (
                (spec.default is not dataclasses.MISSING and item == spec.default)
                or (
                    spec.default_factory is not dataclasses.MISSING
                    and item == spec.default_factory()
                )
            ):
                continue
            out[spec.name] = _general_to_json(item)
        return out
    if isinstance(value, tuple | list):
        return [_general_to_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _general_to_json(item) for key, item in value.items()}
    return value


_WORD = st.text(alphabet="ab\u00e9", max_size=3)
_MAYBE = st.one_of(st.none(), _WORD)
_EXTRA_VALUE = st.sampled_from([{}, {"openai-chat": {"x": [1, None]}}])
_OPAQUE_VALUE = st.one_of(st.none(), st.builds(Opaque, provider=_WORD, format=_WORD, data=_WORD))
_SOME_PART = st.one_of(
    st.builds(TextPart, text=_WORD, signature=_OPAQUE_VALUE, item_id=_MAYBE, extra=_EXTRA_VALUE),
    st.builds(
        ReasoningPart,
        reasoning_kind=st.sampled_from(["raw", "summary"]),
        text=_WORD,
        opaque=_OPAQUE_VALUE,
    ),
    st.builds(
        ToolCallPart,
        call_id=_WORD,
        name=_WORD,
        arguments=_WORD,
        occurrence_id=_MAYBE,
        owner=st.sampled_from(["local", "client", "hosted"]),
    ),
    st.builds(
        ToolResultPart,
        call_id=_WORD,
        output=st.tuples(st.builds(TextPart, text=_WORD)),
        outcome=st.sampled_from(["success", "failed"]),
    ),
)


@given(
    st.lists(
        st.builds(
            Message,
            role=st.sampled_from(["user", "assistant", "tool"]),
            parts=st.lists(_SOME_PART, max_size=3).map(tuple),
            id=_MAYBE,
            extra=_EXTRA_VALUE,
        ),
        max_size=3,
    )
)
def test_to_json_writes_what_the_general_path_writes(messages: list[Message]) -> None:
    assert json.dumps(to_json(messages)) == json.dumps(_general_to_json(messages))
