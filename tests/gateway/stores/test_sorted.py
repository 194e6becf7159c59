"""SortedKeys agrees with a plain sorted set on every sequence of adds, removes and scans."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.stores._sorted import SortedKeys

KEYS = st.text(alphabet="ab/", max_size=4)
OPERATIONS = st.lists(st.tuples(st.sampled_from(["add", "remove", "scan"]), KEYS), max_size=80)


@settings(max_examples=300, deadline=None)
@given(operations=OPERATIONS, block=st.integers(min_value=1, max_value=4))
def test_matches_a_sorted_set(operations: list[tuple[str, str]], block: int) -> None:
    keys = SortedKeys(block)
    model: set[str] = set()
    for operation, key in operations:
        if operation == "add" and key not in model:
            keys.add(key)
            model.add(key)
        elif operation == "remove" and key in model:
            keys.remove(key)
            model.discard(key)
        expected = sorted(held for held in model if held.startswith(key))
        assert list(keys.starting_with(key)) == expected
    assert list(keys.starting_with("")) == sorted(model)
    assert len(keys) == len(model)


def test_many_keys_split_into_blocks_and_emptied_blocks_go() -> None:
    keys = SortedKeys(block=8)
    names = [f"thread/t{number:05d}" for number in range(1000)]
    for name in reversed(names):
        keys.add(name)
    assert list(keys.starting_with("thread/t009")) == names[900:1000]
    assert list(keys.starting_with("thread/")) == names
    for name in names[::2]:
        keys.remove(name)
    assert list(keys.starting_with("thread/t0000")) == names[1:10:2]
    for name in names[1::2]:
        keys.remove(name)
    assert list(keys.starting_with("")) == []
    keys.add("again")
    assert list(keys.starting_with("a")) == ["again"]
