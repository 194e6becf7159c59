"""Compact JSON bodies assembled from pieces that were encoded before.

A translated history prefix is kept as the compact JSON of its items (the bytes between
the brackets of its array). A later request continuing that history encodes only what is
new and writes the kept bytes in place of its history array: the body is the bytes
:func:`~interlock.gateway.model_field.compact_json` (orjson) gives for the whole value,
with the prefix never decoded or encoded again (a 200 KB tool result is copied, not
escaped once more).

Invariants (tested with Hypothesis in ``tests/gateway/test_json_pieces.py``):

* :func:`items_json` of a list is ``compact_json`` of that list without its brackets, and
  :func:`joined` of two such pieces is :func:`items_json` of the two lists concatenated
  (orjson writes an array as its items' encodings joined by ``,``, with no spaces);
* :func:`with_array` is ``compact_json`` of the payload with that member's array made of
  the given items, or ``None`` (the caller encodes the whole value) whenever it cannot be
  sure: orjson refusing the value, or the placeholder it writes not found exactly once.
"""

from __future__ import annotations

import secrets

import orjson

from interlock.transcript import JsonObject, JsonValue

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


def joined(first: bytes, second: bytes) -> bytes:
    """Two :func:`items_json` pieces as one: the items of ``first``, then of ``second``."""
    if first and second:
        return b"".join((first, b",", second))
    return first or second


def with_array(payload: JsonObject, key: str, items: bytes) -> bytes | None:
    """``compact_json`` of ``payload`` with its ``key`` member replaced by the array whose
    items are ``items`` (an :func:`items_json` piece); ``key`` keeps its place.

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
    return b"".join((encoded[:at], b"[", items, b"]", memoryview(encoded)[end:]))
