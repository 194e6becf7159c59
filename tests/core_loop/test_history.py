"""History projection and compaction grouping."""

from __future__ import annotations

from interlock.core_loop import group_messages, keep_last_groups, project_history
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    InputRequestPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolResultPart,
)
from tests.core_loop.harness import call, shape, think, user


def assistant(*parts: object) -> Message:
    return Message(role="assistant", parts=tuple(parts))  # type: ignore[arg-type]


def tool_message(*results: ToolResultPart) -> Message:
    return Message(role="tool", parts=results)


def result(call_id: str, occurrence: str | None = None, text: str = "ok") -> ToolResultPart:
    return ToolResultPart(call_id=call_id, occurrence_id=occurrence, output=(TextPart(text=text),))


def test_append_only_history_replay_drops_resolved_wrappers() -> None:
    c1 = call("c1", "delete", occurrence_id="o1")
    history = [
        user("go"),
        assistant(c1),
        assistant(ApprovalRequestPart(approval_id="a1", call=c1)),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="a1", approved=True),)),
        tool_message(result("c1", "o1")),
        assistant(TextPart(text="done")),
    ]
    assert shape(project_history(history)) == [
        ("user", ["text"]),
        ("assistant", ["tool_call"]),
        ("tool", ["tool_result"]),
        ("assistant", ["text"]),
    ]


def test_results_are_placed_after_their_call_and_orphans_dropped() -> None:
    history = [
        user("go"),
        assistant(think(), call("a", "f", occurrence_id="oa"), call("b", "f", occurrence_id="ob")),
        user("in between"),
        tool_message(result("b", "ob", "B"), result("a", "oa", "A"), result("z", "oz")),
    ]
    projected = project_history(history)
    assert shape(projected) == [
        ("user", ["text"]),
        ("assistant", ["reasoning", "tool_call", "tool_call"]),
        ("tool", ["tool_result", "tool_result"]),
        ("user", ["text"]),
    ]
    assert [r.text for r in projected[2].tool_results] == ["A", "B"], "results in call order"


def test_pending_calls_and_their_reasoning_are_omitted() -> None:
    history = [
        user("go"),
        assistant(
            ReasoningPart(reasoning_kind="raw", text="hmm"),
            TextPart(text="let me"),
            call("p", "f", occurrence_id="op"),
        ),
        assistant(InputRequestPart(request_id="i", occurrence_id="op", call_id="p", prompt="?")),
        user("unrelated"),
    ]
    assert shape(project_history(history)) == [
        ("user", ["text"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
    ]


def test_pending_hosted_history_replay() -> None:
    hosted = ApprovalRequestPart(
        approval_id="h", call=call("h1", "docs", owner="hosted", server_label="s")
    )
    response = Message(role="user", parts=(ApprovalResponsePart(approval_id="h", approved=True),))
    pending = [user("go"), assistant(hosted)]
    assert shape(project_history(pending)) == [
        ("user", ["text"]),
        ("assistant", ["approval_request"]),
    ]
    current = [*pending, response]
    assert shape(project_history(current, current_from=2))[-1] == ("user", ["approval_response"])
    later = [*current, assistant(TextPart(text="here")), user("thanks")]
    assert shape(project_history(later, current_from=4)) == [
        ("user", ["text"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
    ], "once answered, both hosted controls are inert"


def test_projection_is_identity_for_clean_messages() -> None:
    history = (user("a"), assistant(TextPart(text="b")))
    projected = project_history(history)
    assert projected == history and all(x is y for x, y in zip(projected, history, strict=True))


def groups(history: list[Message]) -> list[tuple[int, ...]]:
    return [group.indexes for group in group_messages(history)]


def test_group_keeps_reasoning_call_and_result_atomic() -> None:
    history = [
        user("go"),
        assistant(ReasoningPart(reasoning_kind="raw", text="r")),
        assistant(call("c1", "f")),
        tool_message(result("c1")),
        assistant(TextPart(text="done")),
    ]
    found = group_messages(history)
    assert [g.indexes for g in found] == [(0,), (1, 2, 3), (4,)]
    assert found[1].kind == "tool_call" and found[1].has_reasoning


def test_group_pairs_nonadjacent_result() -> None:
    history = [
        assistant(think(), call("c1", "f")),
        assistant(TextPart(text="mid")),
        tool_message(result("c1")),
    ]
    assert groups(history) == [(0, 2), (1,)]


def test_group_pairs_completed_reused_call_id_occurrences() -> None:
    history = [
        assistant(call("r", "f")),
        tool_message(result("r")),
        assistant(call("r", "f")),
        assistant(TextPart(text="t")),
        tool_message(result("r")),
    ]
    assert groups(history) == [(0, 1), (2, 4), (3,)]


def test_group_closes_assistant_embedded_result_before_reused_id() -> None:
    history = [
        assistant(call("r", "f"), result("r")),
        assistant(call("r", "f")),
        assistant(TextPart(text="t")),
        tool_message(result("r")),
    ]
    assert groups(history) == [(0,), (1, 3), (2,)]


def test_group_does_not_pair_ambiguous_duplicate_ids() -> None:
    history = [
        assistant(call("d", "f")),
        assistant(TextPart(text="t")),
        assistant(call("d", "f")),
        assistant(TextPart(text="u")),
        tool_message(result("d")),
    ]
    assert groups(history) == [(0,), (1,), (2,), (3,), (4,)]


def test_group_pairs_by_occurrence_when_ids_repeat() -> None:
    history = [
        assistant(call("d", "f", occurrence_id="o1")),
        assistant(call("d", "f", occurrence_id="o2")),
        tool_message(result("d", "o1")),
        tool_message(result("d", "o2")),
    ]
    assert groups(history) == [(0, 2), (1, 3)]


def test_result_before_its_call_never_pairs() -> None:
    history = [tool_message(result("c")), user("x"), assistant(call("c", "f"))]
    assert groups(history) == [(0,), (1,), (2,)]


def test_sliding_window_keeps_groups_whole() -> None:
    history = [
        Message(role="system", parts=(TextPart(text="sys"),)),
        user("old"),
        assistant(call("r", "f")),
        assistant(TextPart(text="mid")),
        tool_message(result("r")),
        user("new"),
    ]
    kept = keep_last_groups(history, 2)
    assert shape(kept) == [("system", ["text"]), ("assistant", ["text"]), ("user", ["text"])]
    assert shape(keep_last_groups(history, 3)) == shape(history[:1] + history[2:])


def test_trap23_no_window_leaves_an_orphan_reasoning_call_or_result() -> None:
    """provider-wire.md trap 23: trimming keeps reasoning + calls + results whole, at any size."""
    history = [Message(role="system", parts=(TextPart(text="sys"),)), user("go")]
    for step in range(3):
        history += [
            assistant(ReasoningPart(reasoning_kind="encrypted", text="", item_id=f"rs_{step}")),
            assistant(call(f"a{step}", "f"), call(f"b{step}", "f")),
            tool_message(result(f"a{step}")),
            tool_message(result(f"b{step}")),
        ]
    history.append(assistant(TextPart(text="done")))
    for count in range(len(history) + 1):
        kept = keep_last_groups(history, count)
        calls = {part.call_id for message in kept for part in message.tool_calls}
        answered = {part.call_id for message in kept for part in message.tool_results}
        assert calls == answered, count
        for index, message in enumerate(kept):
            if message.parts and all(isinstance(part, ReasoningPart) for part in message.parts):
                assert kept[index + 1].tool_calls, (count, index)
        assert len(calls) % 2 == 0 and len(kept) in {1, 2, 6, 10, 14, 15}, (count, shape(kept))
