"""The key-value contract, identical on memory, SQLite and Redis."""

from __future__ import annotations

import asyncio

from interlock.gateway.stores import Store


async def test_get_set_and_get_many_in_order(store: Store) -> None:
    backend = store.backend
    await backend.set_many({"a/1": "one", "a/2": "two"})
    assert await backend.get("a/1") == "one"
    assert await backend.get("missing") is None
    assert await backend.get_many(["a/2", "missing", "a/1"]) == ["two", None, "one"]


async def test_add_inserts_only_once(store: Store) -> None:
    assert await store.backend.add("k", "first") is True
    assert await store.backend.add("k", "second") is False
    assert await store.backend.get("k") == "first"


async def test_replace_if_is_compare_and_set(store: Store) -> None:
    await store.backend.set_many({"k": "v1"})
    assert await store.backend.replace_if("k", "stale", "v2") is False
    assert await store.backend.replace_if("k", "v1", "v2") is True
    assert await store.backend.get("k") == "v2"
    assert await store.backend.replace_if("absent", "v1", "v2") is False


async def test_replace_all_if_is_all_or_nothing(store: Store) -> None:
    backend = store.backend
    await backend.set_many({"x": "1", "y": "1"})
    assert await backend.replace_all_if({"x": ("1", "2"), "y": ("stale", "2")}) is False
    assert await backend.get_many(["x", "y"]) == ["1", "1"]
    assert await backend.replace_all_if({"x": ("1", "2"), "absent": ("1", "2")}) is False
    assert await backend.get_many(["x", "absent"]) == ["1", None]
    assert await backend.replace_all_if({"y": ("1", "3"), "x": ("1", "3")}) is True
    assert await backend.get_many(["x", "y"]) == ["3", "3"]


async def test_concurrent_replace_all_in_opposite_orders_has_one_winner(store: Store) -> None:
    keys = [f"k{index}" for index in range(5)]
    await store.backend.set_many(dict.fromkeys(keys, "live"))
    orders = [keys if n % 2 else keys[::-1] for n in range(20)]
    results = await asyncio.gather(
        *(
            store.backend.replace_all_if({key: ("live", f"taken-{n}") for key in order})
            for n, order in enumerate(orders)
        )
    )
    assert results.count(True) == 1
    winner = results.index(True)
    assert await store.backend.get_many(keys) == [f"taken-{winner}"] * 5


async def test_concurrent_adds_have_one_winner(store: Store) -> None:
    results = await asyncio.gather(*(store.backend.add("race", str(i)) for i in range(20)))
    assert results.count(True) == 1


async def test_concurrent_compare_and_set_has_one_winner(store: Store) -> None:
    await store.backend.set_many({"race": "live"})
    results = await asyncio.gather(
        *(store.backend.replace_if("race", "live", f"taken-{i}") for i in range(20))
    )
    assert results.count(True) == 1


async def test_scan_is_sorted_by_key_and_respects_the_prefix(store: Store) -> None:
    await store.backend.set_many({"p/b": "2", "p/a": "1", "q/a": "3", "p*x": "glob"})
    assert await store.backend.scan("p/") == [("p/a", "1"), ("p/b", "2")]
    assert await store.backend.scan("p*") == [("p*x", "glob")]


async def test_delete(store: Store) -> None:
    await store.backend.set_many({"k": "v"})
    await store.backend.delete("k")
    await store.backend.delete("never-there")
    assert await store.backend.get("k") is None


async def test_scan_after_adds_replaces_and_deletes_sees_exactly_the_live_keys(
    store: Store,
) -> None:
    """Every backend against a plain dict after a mixed sequence of writes (the memory
    backend keeps a sorted key index for scans: it must follow every write)."""
    backend, expected = store.backend, dict[str, str]()
    keys = [f"{group}/{number:02d}" for group in ("a", "a/b", "ab", "b") for number in (3, 1, 2)]
    for round_number in range(3):
        for position, key in enumerate(keys):
            value = f"{round_number}-{position}"
            if position % 3 == 0:
                await backend.set_many({key: value, "z/" + key: value})
                expected.update({key: value, "z/" + key: value})
            elif position % 3 == 1 and await backend.add(key, value):
                assert key not in expected
                expected[key] = value
            elif key in expected:
                await backend.delete(key)
                del expected[key]
        for prefix in ("", "a", "a/", "a/b/", "ab", "b/", "z/a", "c"):
            rows = sorted((key, value) for key, value in expected.items() if key.startswith(prefix))
            assert await backend.scan(prefix) == rows, (round_number, prefix)


async def test_set_many_counted_writes_the_items_and_counts_each_write(store: Store) -> None:
    backend = store.backend
    assert await backend.get_many(["count", "c/1"]) == [None, None]
    assert await backend.set_many_counted({"c/1": "one", "c/2": "two"}, "count") == 1
    assert await backend.set_many_counted({"c/1": "uno"}, "count") == 2
    assert await backend.set_many_counted({}, "count") == 3
    assert await backend.get_many(["count", "c/1", "c/2"]) == ["3", "uno", "two"]
    assert await backend.set_many_counted({"c/3": "three"}, "other") == 1
    assert await backend.scan("c/") == [("c/1", "uno"), ("c/2", "two"), ("c/3", "three")]
    assert await backend.scan("count") == [("count", "3")]


async def test_concurrent_counted_writes_each_get_a_count_of_their_own(store: Store) -> None:
    counts = await asyncio.gather(
        *(store.backend.set_many_counted({f"w/{n}": str(n)}, "count") for n in range(20))
    )
    assert sorted(counts) == list(range(1, 21))
    assert await store.backend.get("count") == "20"
