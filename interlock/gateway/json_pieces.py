"""Compact JSON bodies assembled from pieces that were encoded before.

A translated history prefix is kept as the compact JSON of its items (the bytes between
the brackets of its array, a view into the body that carried them). A later request
continuing that history encodes only what is new and writes the kept bytes in place of
its history array: the body is the bytes :func:`~interlock.gateway.model_field.compact_json`
(orjson) gives for the whole value, with the prefix never decoded or encoded again, and
written into the body with one copy (a 200 KB tool result is copied, not escaped again).

Invariants (tested with Hypothesis in ``tests/gateway/test_json_pieces.py``):

* :func:`items_json` of a list is ``compact_json`` of that list without its brackets
  (orjson writes an array as its items' encodings joined by ``,``, with no spaces), so
  pieces of consecutive lists joined by ``,`` are :func:`items_json` of the joined lists;
* :func:`with_array` is ``compact_json`` of the payload with that member's array made of
  the given pieces' items, or ``None`` (the caller encodes the whole value) whenever it
  cannot be sure: orjson refusing the value, or the placeholder it writes not found
  exactly once.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from interlock.transcript import JsonObject, JsonValue

Piece = bytes | memoryview
"""Items' compact JSON without brackets (:func:`items_json`), or a view of such bytes."""

_PLACEHOLDER = f"interlock-history-{secrets.token_hex(16)}"
"""Written where the history array goes, then replaced (random per process)."""
_PLACEHOLDER_JSON = orjson.dumps(_PLACEHOLDER)


def items_json(items: list[JsonValue], *, pieces: bool = False) -> bytes | None:
    """The compact JSON of ``items`` without the array's brackets; ``None`` when orjson
    refuses a value (an integer beyond 64 bits, a lone surrogate: the caller takes the
    whole-value path, which answers those as before).

    ``pieces``: item by item, the same bytes; one call holds the GIL for its whole run
    (about 60 ms for 11 MB here), so a large history is written one item per call and the
    event loop gets its turn between items (:mod:`.offload`).
    """
    try:
        if pieces:
            return b",".join([orjson.dumps(item) for item in items])
        return orjson.dumps(items)[1:-1]
    except TypeError:  # orjson.JSONEncodeError
        return None


@dataclass(frozen=True, slots=True)
class Written:
    """A body written by :func:`with_array`, and where its array's items are in it."""

    body: bytes
    start: int
    """Offset of the array's first item (just after its ``[``)."""
    end: int
    """Offset of the array's ``]``."""

    @property
    def items(self) -> memoryview:
        """The array's items as written (a view of ``body``: no copy)."""
        return memoryview(self.body)[self.start : self.end]


def with_array(payload: JsonObject, key: str, pieces: Sequence[Piece]) -> Written | None:
    """``compact_json`` of ``payload`` with its ``key`` member replaced by the array whose
    items are those of ``pieces`` in order (:func:`items_json` pieces; empty ones add
    nothing); ``key`` keeps its place.

    ``None`` when orjson refuses the rest of the payload, or when the placeholder's JSON
    is not found exactly once in its encoding (a string of the payload could end with
    the placeholder's text after a quote: then the first match could be that string's).
    """
    shell = dict(payload)
    shell[key] = _PLACEHOLDER
    try:
        encoded = orjson.dumps(shell)
    except TypeError:  # orjson.JSONEncodeError
        return None
    at = encoded.find(_PLACEHOLDER_JSON)
    end = at + len(_PLACEHOLDER_JSON)
    if at < 0 or encoded.find(_PLACEHOLDER_JSON, end) >= 0:
        return None
    items: list[Piece] = []
    for piece in pieces:
        if len(piece):
            items += (b",", piece) if items else (piece,)
    size = sum(len(piece) for piece in items)
    view = memoryview(encoded)
    body = b"".join((view[:at], b"[", *items, b"]", view[end:]))
    return Written(body, at + 1, at + 1 + size)
