"""The ``model`` member of a JSON request body, replaced without re-serializing the body.

A proxied body usually differs from what the client sent only in its model name (the route's
upstream model): splicing that one JSON string in place keeps everything else byte for byte
and costs nothing per history message.
"""

from __future__ import annotations

import functools
import json
import re
from typing import cast

import orjson

from interlock.transcript import JsonObject, JsonValue

COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""One encoder for every compact body (``json.dumps`` with options builds one per call)."""


def compact_json(value: JsonValue) -> bytes:
    """``value`` as compact UTF-8 JSON: the bytes of ``COMPACT.encode(value).encode()``.

    Written by orjson (4–10× faster on a long history or a large tool result, see
    docs/benchmarks/history.md); the same value with the same keys, order and strings,
    but a number may be spelled differently (``1e16`` for ``1e+16``, ``0.00001`` for
    ``1e-05``: the same number to every JSON reader). What orjson refuses
    (an integer beyond 64 bits, a lone surrogate, a non-string key) goes through
    ``COMPACT``, which answers it as it always did.
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return COMPACT.encode(value).encode()


_MODEL_FIELD = re.compile(rb'"model"\s*:\s*')


def rewrite_model(
    body: bytes, old: str, new: str, within: int | None = None, at: int = -1
) -> bytes:
    """``body`` with its top-level ``"model": old`` value replaced by ``new``.

    Only that one JSON string is re-serialized and spliced in. ``at``: the offset of the
    top-level ``model`` member's value, noted while parsing (:class:`ParsedBody`): when
    the value there is ``old`` as ``json.dumps`` writes it, it is replaced without
    searching (a JSON string ends at its first unescaped quote, so a value starting with
    that whole token is that token). Otherwise the body is searched for the member; if
    it cannot be located unambiguously (it appears more than once with that value), the
    whole body is re-serialized instead: correctness first, the fast path when it is
    safe. ``within``: the body's first that many bytes are known to hold the one
    top-level ``model`` member (a parsed head), so the search stops there.
    """
    if old == new:
        return body
    encoded_old = _json_string(old)
    if at >= 0 and body.startswith(encoded_old, at):
        return _spliced(body, at, len(encoded_old), new)
    end = len(body) if within is None else within
    hits = [
        match.end()
        for match in _MODEL_FIELD.finditer(body, 0, end)
        if body.startswith(encoded_old, match.end())
    ]
    if len(hits) == 1:
        return _spliced(body, hits[0], len(encoded_old), new)
    payload = cast(JsonObject, json.loads(body))
    payload["model"] = new
    return compact_json(payload)


def _spliced(body: bytes, start: int, size: int, new: str) -> bytes:
    """``body`` with its ``size`` bytes at ``start`` replaced by ``new`` as a JSON string."""
    # One new buffer: slicing the long tail first would allocate (and fault in) a second
    # copy of it; a memoryview is read in place.
    rest = memoryview(body)[start + size :]
    return b"".join((body[:start], _json_string(new), rest))


@functools.lru_cache(maxsize=1024)
def _json_string(value: str) -> bytes:
    """``value`` as a JSON string (model names: a small, bounded set)."""
    return json.dumps(value).encode()
