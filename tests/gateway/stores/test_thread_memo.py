"""The thread memo (``stores/_thread_memo``): the stored text stays exactly what
serializing the whole thread gives, another writer's text is always read, and a long
thread's save serializes only its new messages. On memory, SQLite and Redis."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.stores import Store, ThreadRecord, identical_prefix, open_store, store_key
from interlock.gateway.stores import _thread_memo as memo_module
from interlock.gateway.stores._thread_memo import Remembered, ThreadMemo, compact, thread_text
from interlock.transcript import Message, TextPart, ToolCallPart, ToolResultPart, to_json


def said(text: str, role: str = "user", number: int = 0) -> Message:
    return Message(
        role="user" if role == "user" else "assistant",
        parts=(TextPart(text=text),),
        id=f"m{number}",
    )


def called(number: int, extra_value: object) -> Message:
    call = ToolCallPart(call_id=f"c{number}", name="f", arguments='{"x":1}', occurrence_id="o")
    result = ToolResultPart(call_id=f"c{number}", output=(TextPart(text="é ✓"),))
    extra = {"vendor": {"value": extra_value}}
    return Message(role="assistant", parts=(call, result), id=f"a{number}", extra=extra)


async def stored(store: Store, tenant: str, thread_id: str) -> str:
    raw = await store.backend.get(store_key("thread", tenant, thread_id))
    assert raw is not None
    return raw


async def test_every_save_stores_exactly_the_whole_documents_text(store: Store) -> None:
    """Appending, replacing an earlier message, NaN and infinities (written as ``NaN`` /
    ``Infinity`` as the standard library writes them, never ``null``), non-ASCII text."""
    messages: tuple[Message, ...] = ()
    record = ThreadRecord()
    states: list[object] = [{"n": math.nan}, {"big": 10**30, "inf": -math.inf}, "ünï", None]
    for step, state in enumerate(states):
        messages = (*messages, said(f"question {step} ✓", number=step), called(step, math.nan))
        if step == 2:  # an earlier message replaced by an equal but new object, one changed
            messages = (said("question 0 ✓", number=0), said("edited"), *messages[2:])
        record = ThreadRecord(
            messages=messages,
            state=state,
            pending_interrupts=({"id": f"int-{step}", "value": math.inf},),
            revision=record.revision,
        )
        saved = await store.save_thread("t", "th", record)
        assert saved is not None
        raw = await stored(store, "t", "th")
        assert raw == compact(record.to_document())
        assert "NaN" in raw and "Infinity" in raw
        record = saved
    fresh = open_store("memory://")  # no memo: parses the text
    await fresh.backend.set_many({store_key("thread", "t", "th"): raw})
    parsed = await fresh.load_thread("t", "th")
    remembered = await store.load_thread("t", "th")
    assert parsed is not None and remembered is not None
    assert math.isnan(parsed.messages[-1].extra["vendor"]["value"])
    assert compact(parsed.to_document()) == compact(remembered.to_document()) == raw


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(), min_size=1, max_size=4),
    state=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=8,
    ),
)
def test_joined_texts_equal_the_whole_documents_text(texts: list[str], state: object) -> None:
    messages = tuple(said(text, number=number) for number, text in enumerate(texts))
    record = ThreadRecord(messages=messages, state=state)
    memo = ThreadMemo()
    joined = thread_text(memo.texts("k", messages), compact(state), "[]")
    assert joined == compact(record.to_document())


async def test_a_long_threads_save_serializes_only_its_new_messages(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serialized: list[object] = []
    real = memo_module.to_json

    def counting(value: object) -> object:
        serialized.append(value)
        return real(value)

    monkeypatch.setattr(memo_module, "to_json", counting)
    record = ThreadRecord()
    for run in range(50):
        loaded = await store.load_thread("t", "long") or record
        new = (said(f"q{run}", number=2 * run), said(f"a{run}", "assistant", 2 * run + 1))
        grown = ThreadRecord(messages=(*loaded.messages, *new), revision=loaded.revision)
        saved = await store.save_thread("t", "long", grown)
        assert saved is not None
    assert len(serialized) == 100  # two a run, never the 98 before them
    loaded = await store.load_thread("t", "long")
    assert loaded is not None and [message.id for message in loaded.messages] == [
        f"m{number}" for number in range(100)
    ]


async def test_a_text_written_by_another_process_is_read_not_remembered(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    mine, theirs = open_store(url), open_store(url)
    try:
        first = await mine.save_thread("t", "th", ThreadRecord(messages=(said("one"),)))
        assert first is not None
        loaded = await theirs.load_thread("t", "th")
        assert loaded is not None
        grown = ThreadRecord(messages=(*loaded.messages, said("two")), revision=loaded.revision)
        assert await theirs.save_thread("t", "th", grown) is not None
        seen = await mine.load_thread("t", "th")
        assert seen is not None and [message.text for message in seen.messages] == ["one", "two"]
        # and mine's stale revision loses the compare-and-set, as without the memo
        assert await mine.save_thread("t", "th", ThreadRecord(revision=first.revision)) is None
    finally:
        await mine.close()
        await theirs.close()


async def test_a_remembered_load_hands_out_state_and_interrupts_of_its_own(store: Store) -> None:
    record = ThreadRecord(state={"items": [1]}, pending_interrupts=({"id": "i", "v": [1]},))
    assert await store.save_thread("t", "th", record) is not None
    first = await store.load_thread("t", "th")
    assert first is not None
    first.state["items"].append(2)
    first.pending_interrupts[0]["v"].append(2)
    again = await store.load_thread("t", "th")
    assert again is not None
    assert again.state == {"items": [1]} and again.pending_interrupts == ({"id": "i", "v": [1]},)


def test_the_memo_forgets_the_least_recently_used_threads_past_its_size() -> None:
    memo = ThreadMemo(max_chars=100)

    def entry(raw: str) -> Remembered:
        return Remembered(raw, (), (), "null", "[]")

    memo.remember("a", entry("x" * 20))
    memo.remember("b", entry("y" * 20))
    assert memo.find("a", "x" * 20) is not None  # a is now the most recently used
    memo.remember("c", entry("z" * 20))  # 120 characters counted twice each: b goes
    assert memo.find("b", "y" * 20) is None
    assert memo.find("a", "x" * 20) is not None and memo.find("c", "z" * 20) is not None
    memo.remember("d", entry("w" * 60))  # larger than the whole memo: not kept
    assert memo.find("d", "w" * 60) is None
    assert memo.find("a", "x" * 20) is not None
    assert memo.find("a", "other") is None  # another text under the same key: a miss


async def test_an_equal_but_new_message_is_written_as_itself(store: Store) -> None:
    """``1`` and ``1.0`` are equal, not the same JSON: only the very same message objects
    reuse a remembered text."""
    integer = Message(role="user", parts=(TextPart(text="x"),), extra={"v": {"n": 1}})
    floating = Message(role="user", parts=(TextPart(text="x"),), extra={"v": {"n": 1.0}})
    assert integer == floating
    saved = await store.save_thread("t", "th", ThreadRecord(messages=(integer, said("y"))))
    assert saved is not None
    edited = ThreadRecord(messages=(floating, saved.messages[1]), revision=saved.revision)
    assert await store.save_thread("t", "th", edited) is not None
    raw = await stored(store, "t", "th")
    assert '"n":1.0' in raw and raw == compact(edited.to_document())


def test_identical_prefix_counts_the_very_same_objects() -> None:
    first, second, third = said("a"), said("b"), said("c")
    assert identical_prefix((first, second), (first, second, third)) == 2
    assert identical_prefix((first, second, third), (first, second)) == 2
    assert identical_prefix((first, said("b")), (first, second)) == 1  # equal, not the same
    assert identical_prefix((), (first,)) == 0


_ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()))  # lone surrogates too
_PART = st.one_of(
    st.builds(TextPart, text=_ANY_TEXT),
    st.builds(
        TextPart,
        text=st.text(),
        extra=st.dictionaries(st.sampled_from(["v"]), st.just({"x": 1.5}), max_size=1),
    ),
    st.builds(ToolCallPart, call_id=st.text(max_size=3), name=st.just("f"), arguments=st.text()),
)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(_PART, max_size=3).map(tuple),
    identifier=st.one_of(st.none(), _ANY_TEXT),
    extra_value=st.one_of(st.none(), st.floats(), st.integers(min_value=-(2**70), max_value=2**70)),
)
def test_a_messages_text_is_what_the_standard_library_writes(
    parts: tuple[TextPart | ToolCallPart, ...], identifier: str | None, extra_value: object
) -> None:
    """``message_text`` (orjson for a message of bare text parts) is ``compact`` of the
    message's document, whatever its strings, numbers and extras."""
    extra = {} if extra_value is None else {"vendor": {"value": extra_value}}
    message = Message(role="user", parts=parts, id=identifier, extra=extra)
    assert memo_module.message_text(message) == compact(to_json(message))
    assert compact({}) == "{}" and compact([]) == "[]"
