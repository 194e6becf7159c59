"""The encoder's text-delta fast path (``encode`` of a ``PartDelta`` for an open text part)
gives exactly the events, and leaves exactly the state, of the general path
(``_part_delta``), whatever the stream around it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs.agui import AguiEventEncoder, EncoderStateError
from interlock.transcript import (
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    ResponseFinished,
    ResponseStarted,
    TextPart,
    ToolCallPart,
    Update,
)

from .scenarios import encoder

_PART = st.sampled_from(
    [
        TextPart(text=""),
        TextPart(text="hi"),
        RefusalPart(text="no"),
        ReasoningPart(reasoning_kind="summary", text="", item_id="rs"),
        ToolCallPart(call_id="c", name="f"),
    ]
)
_UPDATE = st.one_of(
    st.builds(lambda index, part: PartStarted(index=index, part=part), st.integers(0, 2), _PART),
    st.builds(
        lambda index, delta: PartDelta(index=index, delta=delta),
        st.integers(0, 3),
        st.sampled_from(["", "a", "é ", '"}']),
    ),
    st.builds(lambda index, part: PartFinished(index=index, part=part), st.integers(0, 2), _PART),
    st.just(ResponseFinished()),
    st.just(ResponseStarted(model="m")),
)


def _run(updates: list[Update], general: bool) -> str:
    """Each update's events (or refusal), then the end of the run, as JSON text (key order
    included), with deltas through ``_part_delta`` alone when ``general``."""
    target: AguiEventEncoder = encoder()
    outcomes: list[object] = [target.start()]
    for update in updates:
        try:
            if general and isinstance(update, PartDelta):
                outcomes.append(target._part_delta(update.index, update.delta))  # pyright: ignore[reportPrivateUsage]
            else:
                outcomes.append(target.encode(update, message_id="m1"))
        except EncoderStateError as error:
            outcomes.append(("EncoderStateError", str(error)))
    outcomes.append(target.finish())
    return json.dumps(outcomes)


@settings(max_examples=300, deadline=None)
@given(st.lists(_UPDATE, max_size=12))
def test_a_text_delta_encodes_as_the_general_path_encodes_it(updates: list[Update]) -> None:
    assert _run(updates, general=False) == _run(updates, general=True)
