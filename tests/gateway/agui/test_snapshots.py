"""The snapshot memo (``gateway/agui/_snapshots``): a thread's ``MESSAGES_SNAPSHOT``
messages are exactly what rendering and windowing the whole thread gives, whatever the
thread's history of growth, edits, sealed payloads, confirmations and windows; and a
growing thread renders only its new messages."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from interlock.codecs.agui import messages_to_agui, window_messages
from interlock.gateway.agui import _snapshots as snapshots_module
from interlock.gateway.agui._snapshots import SnapshotMemo
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.codecs.agui.scenarios import ENCRYPTED, KEY, SIGNATURE

OTHER_KEY = b"another-seal-key-0123456789abcde"


def kinds(number: int) -> dict[str, tuple[Message, ...]]:
    """Message groups a thread grows by, their ids made unique by ``number``."""
    call = ToolCallPart(call_id=f"call_{number}", name="f", arguments='{"a":1}')
    return {
        "user": (Message(role="user", parts=(TextPart(text=f"q{number} ✓"),), id=f"u{number}"),),
        "answer": (
            Message(
                role="assistant",
                parts=(
                    ReasoningPart(reasoning_kind="summary", text="r", opaque=ENCRYPTED),
                    TextPart(text=f"a{number}"),
                ),
                id=f"a{number}",
            ),
        ),
        "tool": (
            Message(role="assistant", parts=(replace(call, signature=SIGNATURE),), id=f"c{number}"),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id=call.call_id, output=(TextPart(text="ok"),)),),
                id=f"t{number}",
            ),
        ),
        "no_id": (Message(role="user", parts=(TextPart(text="anonymous"),)),),
        "approval": (
            Message(
                role="assistant",
                parts=(ApprovalRequestPart(approval_id=f"ap{number}", call=call),),
                id=f"ap{number}",
            ),
            Message(
                role="user",
                parts=(ApprovalResponsePart(approval_id=f"ap{number}", approved=True),),
                id=f"d{number}",
            ),
        ),
    }


STEP = st.tuples(
    st.lists(st.sampled_from(["user", "answer", "tool", "no_id", "approval"]), max_size=3),
    st.sampled_from(["keep", "keep", "keep", "rebuild_first", "drop_last"]),
    st.sampled_from(["interrupt", "interrupt", "confirm_changes"]),
    st.sampled_from([KEY, KEY, OTHER_KEY]),
    st.sampled_from([8 * 1024 * 1024, 8 * 1024 * 1024, 600]),
)


BIG = 8 * 1024 * 1024


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=8))
@example(
    steps=[(["approval", "tool"], "keep", "confirm_changes", KEY, BIG)]
)  # a resolved confirmation
@example(steps=[(["user", "answer"], "keep", "interrupt", KEY, BIG)] * 3)
@example(
    steps=[
        (["user", "tool"], "keep", "interrupt", KEY, BIG),
        (["answer"], "keep", "interrupt", KEY, 300),
    ]
)
def test_the_memo_gives_what_rendering_the_whole_thread_gives(
    steps: list[tuple[list[str], str, str, bytes, int]],
) -> None:
    memo = SnapshotMemo()
    messages: tuple[Message, ...] = ()
    for number, (added, edit, style, key, limit) in enumerate(steps):
        for kind in added:
            messages += kinds(number)[kind]
        if edit == "rebuild_first" and messages:  # an equal message, but a new object
            messages = (replace(messages[0]), *messages[1:])
        elif edit == "drop_last":
            messages = messages[:-1]
        got = memo.window(
            ("acme", "thread"),
            messages,
            seal_key=key,
            style=style,  # type: ignore[arg-type]  # one of the two styles
            limit=limit,
        )
        whole = messages_to_agui(messages, seal_key=key, tenant="acme", approval_style=style)  # type: ignore[arg-type]
        assert got == window_messages(whole, limit)


def test_a_growing_thread_renders_only_its_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[int] = []
    real = snapshots_module.messages_to_agui

    def counting(messages: list[Message], **options: object) -> object:
        rendered.append(len(messages))
        return real(messages, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshots_module, "messages_to_agui", counting)
    memo = SnapshotMemo()
    messages: tuple[Message, ...] = ()
    for run in range(40):
        messages += kinds(run)["user"] + kinds(run)["answer"]
        window, omitted = memo.window(
            ("acme", "long"), messages, seal_key=KEY, style="interrupt", limit=1 << 23
        )
        assert len(window) == 2 * len(messages) - len(messages) // 2  # reasoning shown apart
        assert omitted == 0
    # the first snapshot whole (as without the memo: most threads have one), the second
    # message by message to fill the memo, then each new message once, alone
    assert rendered == [2] + [1] * 80
    memo.window(("other", "long"), messages, seal_key=KEY, style="interrupt", limit=1 << 23)
    assert rendered[-1] == 80  # another tenant's thread of the same id shares nothing


def test_the_memo_holds_a_bounded_number_of_messages() -> None:
    memo = SnapshotMemo(max_messages=5)
    three = kinds(0)["user"] + kinds(0)["answer"] + kinds(1)["user"]
    for thread in ("a", "a", "b", "b"):  # remembered from a thread's second snapshot on
        memo.window(("t", thread), three, seal_key=KEY, style="interrupt", limit=1 << 20)
    assert list(memo._entries) == [("t", "b")]  # pyright: ignore[reportPrivateUsage]
