"""Sorted string keys in blocks, for prefix scans that cost what they return.

:class:`SortedKeys` keeps its keys sorted across blocks of at most ``2 * block`` keys, each
block sorted and every key of a block below every key of the next. Adding or removing one
key costs a bisection over the block maxima plus a move inside one block, so it stays
cheap however many keys are held (one sorted list paid a move of every later key on
every insert: a store that kept its threads grew slower with every run it served).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator

BLOCK = 512
"""Keys a block is split back to once it holds twice as many."""


class SortedKeys:
    """A sorted set of strings (add only absent keys, remove only present ones).

    Invariants: every block is non-empty and sorted; ``_maxes[i]`` is block ``i``'s last
    key; the blocks' ranges are ordered and disjoint.
    """

    __slots__ = ("_blocks", "_maxes", "block")

    def __init__(self, block: int = BLOCK) -> None:
        self.block = block
        self._blocks: list[list[str]] = []
        self._maxes: list[str] = []

    def __len__(self) -> int:
        return sum(map(len, self._blocks))

    def add(self, key: str) -> None:
        """Insert ``key``, which must not be held already."""
        if not self._blocks:
            self._blocks.append([key])
            self._maxes.append(key)
            return
        index = min(bisect_left(self._maxes, key), len(self._maxes) - 1)
        block = self._blocks[index]
        insort(block, key)
        self._maxes[index] = block[-1]
        if len(block) > 2 * self.block:
            half = len(block) // 2
            self._blocks[index : index + 1] = [block[:half], block[half:]]
            self._maxes[index : index + 1] = [block[half - 1], block[-1]]

    def remove(self, key: str) -> None:
        """Delete ``key``, which must be held."""
        index = bisect_left(self._maxes, key)
        block = self._blocks[index]
        del block[bisect_left(block, key)]
        if block:
            self._maxes[index] = block[-1]
        else:
            del self._blocks[index]
            del self._maxes[index]

    def starting_with(self, prefix: str) -> Iterator[str]:
        """The held keys that start with ``prefix``, in order."""
        blocks = self._blocks
        for index in range(bisect_left(self._maxes, prefix), len(blocks)):
            block = blocks[index]
            for position in range(bisect_left(block, prefix), len(block)):
                key = block[position]
                if not key.startswith(prefix):
                    return
                yield key

    def clear(self) -> None:
        """Forget every key."""
        self._blocks.clear()
        self._maxes.clear()
