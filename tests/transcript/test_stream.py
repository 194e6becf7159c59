"""The one fold from stream updates to a complete response."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.transcript import (
    Alternative,
    CandidateUpdate,
    Message,
    Opaque,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    Response,
    ResponseBuilder,
    ResponseFinished,
    ResponseStarted,
    StreamFoldError,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    Usage,
    UsageUpdate,
    fold_updates,
    response_to_updates,
)


def test_parallel_call_deltas_merge_by_index_not_into_the_last_call() -> None:
    updates = [
        ResponseStarted(id="r1", model="m"),
        PartStarted(index=0, part=ToolCallPart(call_id="call_A", name="weather")),
        PartStarted(index=1, part=ToolCallPart(call_id="call_B", name="weather")),
        PartDelta(index=0, delta='{"city":'),
        PartDelta(index=1, delta='{"city":"Rome"}'),
        PartDelta(index=0, delta='"Paris"}'),
        UsageUpdate(usage=Usage(input_tokens=3, output_tokens=5)),
        ResponseFinished(finish_reason="tool_calls"),
    ]
    response = fold_updates(updates)
    calls = response.message.tool_calls
    assert [c.call_id for c in calls] == ["call_A", "call_B"]
    assert calls[0].arguments == '{"city":"Paris"}'
    assert calls[1].arguments == '{"city":"Rome"}'
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(input_tokens=3, output_tokens=5)


def test_finished_part_is_authoritative() -> None:
    opaque = Opaque(provider="openai", format="openai.responses.encrypted_content", data="full")
    final = ReasoningPart(reasoning_kind="summary", text="abc", item_id="rs_1", opaque=opaque)
    response = fold_updates(
        [
            PartStarted(index=0, part=ReasoningPart(reasoning_kind="summary", item_id="rs_1")),
            PartDelta(index=0, delta="ab"),
            PartFinished(index=0, part=final),
        ]
    )
    assert response.message.parts == (final,)


def test_signature_only_trailing_part_keeps_its_boundary() -> None:
    signature = Opaque(provider="google", format="gemini.thought_signature", data="EjQK")
    response = fold_updates(
        [
            PartStarted(index=0, part=TextPart(text="The answer")),
            PartDelta(index=0, delta=" is 42."),
            PartStarted(index=1, part=TextPart(text="", signature=signature)),
        ]
    )
    assert response.message.parts == (
        TextPart(text="The answer is 42."),
        TextPart(text="", signature=signature),
    )


def test_delta_before_start_is_an_error() -> None:
    with pytest.raises(StreamFoldError):
        fold_updates([PartDelta(index=3, delta="x")])


def test_updates_of_a_response_fold_back_to_it() -> None:
    response = fold_updates(
        [
            ResponseStarted(id="r", model="m", created=1),
            PartStarted(index=0, part=TextPart(text="hi")),
            ResponseFinished(finish_reason="stop", native_finish_reason="STOP"),
        ]
    )
    assert fold_updates(response_to_updates(response)) == response


def test_delta_tokens_append_to_the_text_and_other_candidates_fold_apart() -> None:
    hi, there = TokenLogprob(token="Hi", logprob=-0.1), TokenLogprob(token=" there", logprob=-0.2)
    updates = [
        ResponseStarted(id="r1"),
        PartStarted(index=0, part=TextPart(text="Hi", logprobs=(hi,))),
        CandidateUpdate(candidate=1, update=PartStarted(index=0, part=TextPart(text="Yo"))),
        PartDelta(index=0, delta=" there", logprobs=(there,)),
        CandidateUpdate(candidate=1, update=PartDelta(index=0, delta="!")),
        CandidateUpdate(candidate=1, update=ResponseFinished(finish_reason="length")),
        ResponseFinished(finish_reason="stop"),
    ]
    folded = fold_updates(updates)
    assert folded.message.parts == (TextPart(text="Hi there", logprobs=(hi, there)),)
    assert folded.finish_reason == "stop"
    assert folded.alternatives == (
        Alternative(
            message=Message(role="assistant", parts=(TextPart(text="Yo!"),)),
            finish_reason="length",
        ),
    )
    again = fold_updates(response_to_updates(folded))
    assert again == Response(
        message=folded.message,
        id="r1",
        finish_reason="stop",
        alternatives=folded.alternatives,
    )


def test_candidate_zero_is_never_wrapped() -> None:
    with pytest.raises(StreamFoldError):
        fold_updates(
            [CandidateUpdate(candidate=0, update=PartStarted(index=0, part=TextPart(text="")))]
        )


_LOGPROB = TokenLogprob(token="a", logprob=-0.5)
_UPDATE = st.one_of(
    st.builds(
        lambda index, text: PartStarted(index=index, part=TextPart(text=text)),
        st.integers(0, 2),
        st.sampled_from(["", "x"]),
    ),
    st.builds(
        lambda index: PartStarted(index=index, part=ToolCallPart(call_id="c", name="f")),
        st.integers(0, 2),
    ),
    st.builds(
        lambda index, delta, logprobs: PartDelta(index=index, delta=delta, logprobs=logprobs),
        st.integers(0, 3),
        st.sampled_from(["", "a", "bc"]),
        st.sampled_from([(), (_LOGPROB,)]),
    ),
    st.builds(
        lambda index: PartFinished(index=index, part=TextPart(text="done")), st.integers(0, 2)
    ),
)


def _folded(updates: list[PartStarted | PartDelta | PartFinished], general: bool) -> object:
    builder = ResponseBuilder()
    try:
        for update in updates:
            # the general path alone: every update through the pattern match
            builder._add(update) if general else builder.add(update)  # pyright: ignore[reportPrivateUsage]
    except StreamFoldError as error:
        return ("StreamFoldError", str(error))
    return repr(builder.build())


@given(st.lists(_UPDATE, max_size=10))
def test_a_plain_delta_folds_as_the_general_path_folds_it(
    updates: list[PartStarted | PartDelta | PartFinished],
) -> None:
    assert _folded(updates, general=False) == _folded(updates, general=True)
