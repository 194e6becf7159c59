"""A continued vault lookup skips reading its known keys only when every write counted
since was this process's own and wrote none of them; any other write (another process on
the same SQLite file or Redis, this process's own to a known key, one it no longer
remembers) reads them all again. Each lookup equals a fresh one of all its keys."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway import vault as vault_module
from interlock.gateway.config import UpstreamConfig
from interlock.gateway.stores import Store, open_store
from interlock.gateway.vault import Lookup, ReasoningVault, needs, reasoning_key
from interlock.transcript import (
    OPENAI_ENCRYPTED_CONTENT,
    Message,
    Opaque,
    ReasoningPart,
    ToolCallPart,
)

UPSTREAM = UpstreamConfig(
    name="up", protocol="openai-responses", base_url="https://x.example", vendor="openai"
)


def _call(number: int) -> ToolCallPart:
    return ToolCallPart(call_id=f"call_{number}", name="f", arguments="{}")


def _step(number: int, data: str) -> Message:
    """A model step whose reasoning the vault keeps under :func:`_key` ``(number)``."""
    opaque = Opaque(provider=needs(UPSTREAM).provider, format=OPENAI_ENCRYPTED_CONTENT, data=data)
    reasoning = ReasoningPart(reasoning_kind="encrypted", opaque=opaque)
    return Message(role="assistant", parts=(reasoning, _call(number)))


def _key(number: int) -> str:
    return reasoning_key((_call(number),))


def _keys(*numbers: int) -> list[str]:
    return [_key(number) for number in numbers]


def recorded(store: Store) -> list[int]:
    """How many keys each later read of ``store``'s backend asks for."""
    sizes: list[int] = []
    read: Callable[[Sequence[str]], Awaitable[list[str | None]]] = store.backend.get_many

    async def get_many(keys: Sequence[str]) -> list[str | None]:
        sizes.append(len(keys))
        return await read(keys)

    store.backend.get_many = get_many  # type: ignore[method-assign]  # a spy on the real one
    return sizes


async def fresh(store: Store, ids: Sequence[str], tenant: str = "t") -> Lookup:
    """What a lookup of every key reads, with nothing known."""
    return await ReasoningVault(store).look(tenant, UPSTREAM, list(ids))


@pytest.fixture(params=["sqlite", "redis"])
async def shared(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Store]]:
    """Two stores on one SQLite file or one Redis database: two gateway processes."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        base = request.getfixturevalue("redis_url")
        url = base[: base.rindex("/")] + "/15"
    stores = [open_store(url), open_store(url)]
    if request.param == "redis":
        for key, _ in await stores[0].backend.scan(""):
            await stores[0].backend.delete(key)
    try:
        yield stores
    finally:
        for store in stores:
            await store.close()


async def test_after_own_writes_of_other_keys_only_the_count_and_new_keys_are_read(
    shared: list[Store],
) -> None:
    store = shared[0]
    vault = ReasoningVault(store)
    await vault.remember("t", UPSTREAM, _step(1, "a"))
    known = await vault.look("t", UPSTREAM, _keys(1, 2))
    await vault.remember("t", UPSTREAM, _step(3, "c"))
    await vault.remember("t", UPSTREAM, _step(4, "d"))
    reads = recorded(store)
    later = await vault.look("t", UPSTREAM, _keys(3), known)
    assert reads == [2]  # the count and the new key: not the known ones again
    assert later == await fresh(store, _keys(1, 2, 3))
    assert set(later.found) == set(_keys(1, 3))


async def test_a_write_by_another_process_reads_the_known_keys_again(shared: list[Store]) -> None:
    store, other_store = shared
    vault, other = ReasoningVault(store), ReasoningVault(other_store)
    await vault.remember("t", UPSTREAM, _step(1, "a"))
    known = await vault.look("t", UPSTREAM, _keys(1, 2))
    await other.remember("t", UPSTREAM, _step(2, "b"))  # absent when ``known`` was read
    reads = recorded(store)
    later = await vault.look("t", UPSTREAM, _keys(3), known)
    assert reads == [2, 4]  # then the count, the two known keys and the new one
    assert later == await fresh(store, _keys(1, 2, 3))
    assert _key(2) in later.found
    await other.remember("t", UPSTREAM, _step(9, "i"))  # another key, still another process
    reads.clear()
    again = await vault.look("t", UPSTREAM, [], later)
    assert reads == [1, 4]
    assert again == await fresh(store, _keys(1, 2, 3))


async def test_an_own_write_of_a_known_key_reads_them_again() -> None:
    store = open_store("memory://")
    vault = ReasoningVault(store)
    await vault.remember("t", UPSTREAM, _step(1, "a"))
    known = await vault.look("t", UPSTREAM, _keys(1, 2))
    await vault.remember("t", UPSTREAM, _step(1, "a, answered again"))
    reads = recorded(store)
    later = await vault.look("t", UPSTREAM, _keys(3), known)
    assert reads == [2, 4]
    assert later == await fresh(store, _keys(1, 2, 3))
    assert later.texts[0] != known.texts[0]


async def test_past_the_writes_it_remembers_a_process_reads_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vault_module, "WRITES_REMEMBERED", 2)
    store = open_store("memory://")
    vault = ReasoningVault(store)
    known = await vault.look("t", UPSTREAM, _keys(1))
    for number in (5, 6):
        await vault.remember("t", UPSTREAM, _step(number, "x"))
    reads = recorded(store)
    assert await vault.look("t", UPSTREAM, [], known) == await fresh(store, _keys(1))
    assert reads == [1, 2]  # the count alone (then the fresh lookup's count and key)
    await vault.remember("t", UPSTREAM, _step(7, "x"))  # the first of the three is forgotten
    reads.clear()
    assert await vault.look("t", UPSTREAM, [], known) == await fresh(store, _keys(1))
    assert reads == [1, 2, 2]


async def test_a_store_emptied_since_is_read_again() -> None:
    store = open_store("memory://")
    vault = ReasoningVault(store)
    await vault.remember("t", UPSTREAM, _step(1, "a"))
    known = await vault.look("t", UPSTREAM, _keys(1))
    for key, _ in await store.backend.scan(""):
        await store.backend.delete(key)
    emptied = await vault.look("t", UPSTREAM, [], known)
    assert emptied.found == {} and emptied == await fresh(store, _keys(1))


async def test_tenants_are_counted_apart_and_never_see_each_others_entries(
    shared: list[Store],
) -> None:
    store, other_store = shared
    vault, other = ReasoningVault(store), ReasoningVault(other_store)
    await vault.remember("t", UPSTREAM, _step(1, "mine"))
    known = await vault.look("t", UPSTREAM, _keys(1, 2))
    await other.remember("u", UPSTREAM, _step(1, "theirs"))  # the same ids, another tenant
    await other.remember("u", UPSTREAM, _step(2, "theirs"))
    reads = recorded(store)
    later = await vault.look("t", UPSTREAM, _keys(3), known)
    assert reads == [2]  # no write of tenant t since: nothing to read again
    assert later == await fresh(store, _keys(1, 2, 3))
    assert list(later.found) == [_key(1)]
    theirs = await fresh(store, _keys(1, 2), tenant="u")
    assert set(theirs.found) == set(_keys(1, 2)) and theirs.texts != later.texts[:2]


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("own"), st.integers(0, 5), st.text("ab", max_size=2)),
        st.tuples(st.just("other"), st.integers(0, 5), st.text("ab", max_size=2)),
        st.tuples(st.just("look"), st.lists(st.integers(0, 5), max_size=3)),
        st.tuples(st.just("restart")),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(OPERATIONS, st.integers(1, 4))
def test_every_continued_lookup_equals_a_fresh_lookup_of_all_its_keys(
    operations: list[tuple[object, ...]], remembered: int
) -> None:
    """Writes by this process and another one (``other``), in any order, between lookups
    that each continue the last (``restart``: the next one starts anew), with few writes
    remembered: every lookup reads what a lookup of all its keys with nothing known reads."""
    before = vault_module.WRITES_REMEMBERED
    vault_module.WRITES_REMEMBERED = remembered
    try:
        asyncio.run(_replay(operations))
    finally:
        vault_module.WRITES_REMEMBERED = before


async def _replay(operations: list[tuple[object, ...]]) -> None:
    store = open_store("memory://")
    vault, other = ReasoningVault(store), ReasoningVault(store)
    known: Lookup | None = None
    for operation in operations:
        match operation:
            case ("own" | "other") as writer, int(number), str(data):
                await (vault if writer == "own" else other).remember(
                    "t", UPSTREAM, _step(number, data)
                )
            case "look", list(numbers):
                known = await vault.look("t", UPSTREAM, _keys(*numbers), known)
                assert known == await fresh(store, known.ids)
            case _:
                known = None
