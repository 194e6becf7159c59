"""Vault and thread storage, identical on memory, SQLite and Redis."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.gateway.stores import CorruptThreadError, Store, ThreadRecord, open_store, store_key
from interlock.transcript import Message, TextPart


async def test_vault_is_scoped_by_tenant_and_upstream(store: Store) -> None:
    await store.vault_put("t1", "up", {"sig:call_1": {"data": "A"}})
    assert await store.vault_get("t1", "up", ["sig:call_1", "sig:other"]) == {
        "sig:call_1": {"data": "A"}
    }
    assert await store.vault_get("t2", "up", ["sig:call_1"]) == {}
    assert await store.vault_get("t1", "other-upstream", ["sig:call_1"]) == {}


def test_keys_of_different_components_never_collide() -> None:
    assert store_key("vault", "a/b", "c") != store_key("vault", "a", "b/c")


@given(st.text(), st.lists(st.text(), max_size=3))
def test_keys_are_every_component_percent_encoded(tenant: str, parts: list[str]) -> None:
    """Unquoted components (the common case) are skipped by a fast check: same keys."""
    quoted = [quote(component, safe="") for component in [tenant, *parts]]
    assert store_key("vault", tenant, *parts) == "/".join(["vault", *quoted])


@pytest.mark.parametrize(
    "part", ["call_1", "sig:c", "reasoning:a/b", "a.b~c-d", "", "é", "a b", "%41", "x\n"]
)
def test_a_key_component_is_quoted_exactly_when_it_needs_it(part: str) -> None:
    assert store_key("thread", "t", part) == f"thread/t/{quote(part, safe='')}"


async def test_thread_round_trip_and_optimistic_concurrency(store: Store) -> None:
    assert await store.load_thread("t", "th") is None
    first = ThreadRecord(
        messages=(Message(role="user", parts=(TextPart(text="hi"),)),),
        state={"count": 1},
        pending_interrupts=({"id": "int-1"},),
    )
    saved = await store.save_thread("t", "th", first)
    assert saved is not None
    loaded = await store.load_thread("t", "th")
    assert loaded == first
    assert loaded is not None
    # Two writers start from the same revision: only one may save.
    winner = await store.save_thread(
        "t", "th", ThreadRecord(messages=(), state=2, revision=loaded.revision)
    )
    loser = await store.save_thread(
        "t", "th", ThreadRecord(messages=(), state=3, revision=loaded.revision)
    )
    assert winner is not None and loser is None
    again = await store.load_thread("t", "th")
    assert again is not None and again.state == 2
    # A second "new thread" save of an existing id is refused, not an overwrite.
    assert await store.save_thread("t", "th", ThreadRecord()) is None


async def test_sqlite_state_survives_reopening(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'durable.db'}"
    first = open_store(url)
    await first.vault_put("t", "up", {"sig:c": "kept"})
    await first.close()
    second = open_store(url)
    try:
        assert await second.vault_get("t", "up", ["sig:c"]) == {"sig:c": "kept"}
    finally:
        await second.close()


CORRUPTED = [
    ("not json {", "Expecting value"),
    ("[1, 2]", "not a JSON object"),
    ('{"state": null}', "no transcript"),
    ('{"transcript": {"version": 1, "messages": [{"role": 7}]}}', "transcript.messages[0]"),
    ('{"transcript": {"version": 1, "messages": []}, "pending_interrupts": [3]}', "string id"),
]


@pytest.mark.parametrize(("raw", "detail"), CORRUPTED)
async def test_a_corrupted_thread_row_is_refused_naming_the_thread(
    store: Store, raw: str, detail: str
) -> None:
    await store.backend.set_many({store_key("thread", "tenant", "broken-thread"): raw})
    with pytest.raises(CorruptThreadError) as refused:
        await store.load_thread("tenant", "broken-thread")
    assert refused.value.thread_id == "broken-thread"
    assert str(refused.value).startswith("stored thread 'broken-thread' is corrupted: ")
    assert detail in str(refused.value)
