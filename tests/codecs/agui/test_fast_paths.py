"""Fast paths of the AG-UI codec against their general paths.

The encoder's text-delta fast path (``encode`` of a ``PartDelta`` for an open text part)
gives exactly the events, and leaves exactly the state, of the general path
(``_part_delta``), whatever the stream around it; a snapshot's ``confirm_changes``
cleaning skips a snapshot without tool messages, returning what the general path gives."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs.agui import (
    AguiEventEncoder,
    EncoderStateError,
    clean_confirm_changes,
    compact_json,
)
from interlock.codecs.agui._snapshot import _cleaned
from interlock.transcript import (
    JsonObject,
    JsonValue,
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


_CALL_ID = st.sampled_from(["c1", "c2", "confirm_changes:a1", "confirm_changes:a1:answer"])
_SNAPSHOT_MESSAGE = st.one_of(
    st.builds(
        lambda i, text: {"id": f"m{i}", "role": "user", "content": text},
        st.integers(0, 9),
        st.text(max_size=3),
    ),
    st.builds(
        lambda i, calls: {
            "id": f"m{i}",
            "role": "assistant",
            "toolCalls": [
                {"id": call, "type": "function", "function": {"name": name, "arguments": args}}
                for call, name, args in calls
            ],
        },
        st.integers(0, 9),
        st.lists(
            st.tuples(
                _CALL_ID,
                st.sampled_from(["confirm_changes", "f"]),
                st.sampled_from(['{"function_call_id":"c1"}', "{}", "x"]),
            ),
            max_size=2,
        ),
    ),
    st.builds(
        lambda i, call, content: {
            "id": f"m{i}",
            "role": "tool",
            "toolCallId": call,
            "content": content,
        },
        st.integers(0, 9),
        _CALL_ID,
        st.sampled_from(
            [
                '{"accepted":true}',
                '{"accepted":false}',
                "done",
                '{"accepted":true,"function_call_id":"c1"}',
            ]
        ),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SNAPSHOT_MESSAGE, max_size=5))
def test_a_snapshot_is_cleaned_as_the_general_path_cleans_it(snapshot: list[JsonObject]) -> None:
    """``clean_confirm_changes`` returns a snapshot without tool messages as it is; the
    general path (every message looked at) gives the same list."""
    before = json.dumps(snapshot)
    assert clean_confirm_changes(snapshot) == _cleaned(snapshot, None)
    assert json.dumps(snapshot) == before  # the input is not modified


_ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()))  # lone surrogates too


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.dictionaries(_ANY_TEXT, _ANY_TEXT, max_size=4),
        st.dictionaries(st.text(max_size=2), st.one_of(st.text(), st.floats(), st.none())),
        st.lists(st.text(), max_size=2),
    )
)
def test_compact_json_writes_what_json_dumps_writes(value: JsonValue) -> None:
    """An object of strings goes through orjson; the text is ``json.dumps``'s."""
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert compact_json(value) == expected
