"""Request JSON as strictly as the gateway needs it: what it cannot forward faithfully,
it refuses (400) instead of failing later with a 500.

* A repeated key is refused: ``json.loads`` keeps the last value, so the gateway would
  route and check one ``"model"`` while a passed-through body carries both to the upstream.
* A lone UTF-16 surrogate escape (``"\\ud800"``) is refused: it has no UTF-8 form, so it
  could be neither re-encoded for an upstream nor stored.
* Nesting deeper than the parser's recursion limit is refused (``RecursionError`` would
  otherwise escape as a 500); the proxy also answers a ``RecursionError`` met later, in a
  codec walking a deep but parseable value, with this 400.

:func:`loads` parses with orjson first (a fifth of the time of ``json`` with a
duplicate-key hook) and keeps that value only where it is provably what the strict
``json`` parse returns (:func:`fast_loads`); anything else takes the strict parse, which then
answers with its own value or error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import cast

import orjson

from interlock.transcript import JsonObject, JsonValue

TOO_DEEP = "JSON nested too deeply"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class StrictJsonError(ValueError):
    """Input JSON the gateway refuses; ``path`` names the place (``messages[2].content``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


def _pairs(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise StrictJsonError("", f"duplicate key {json.dumps(repeated)} in a JSON object")
    return result


DECODER = json.JSONDecoder(object_pairs_hook=_pairs)
"""A decoder refusing repeated keys (its ``raw_decode`` too)."""


_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
"""A byte table keeping digits as ``0`` and making everything else a space."""
_LONG_NUMBER = b"0" * 19
"""19 digits in a row: a number orjson may read differently (an integer past 64 bits
becomes a float there) — or just digits in a string; either way the strict parse. (A
translate and a substring search: a regex search costs ten times as much.)"""
_ESCAPED_COLON = b"\\u003"
"""The start of ``\\u003a`` (``:`` escaped), and of other escapes: their colon would be
counted in the parsed strings but not in the body."""


def fast_loads(body: bytes) -> JsonValue | None:
    """``body`` parsed by orjson when that is exactly what :func:`loads`'s strict parse
    returns, else ``None``.

    orjson refuses what ``json`` refuses here (malformed text, invalid UTF-8, lone
    surrogate escapes, ``NaN``, nesting past its limit: all ``None``), reads numbers of
    up to 18 digits as ``json`` does (longer ones: ``None``), and keeps the last of
    repeated keys where the strict parse refuses them. A repeated key is found by
    counting colons: in the body each object member has one, plus those inside strings;
    written back by orjson (which never escapes a colon) the parsed value has one per
    member it kept plus the same ones inside strings, provided the body spelled none of
    them as an escape. A dropped member takes its colon with it: fewer colons.
    """
    if _ESCAPED_COLON in body or _LONG_NUMBER in body.translate(_DIGITS):
        return None
    try:
        value: JsonValue = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return value if _written_back(body, value) else None


def rewritten(body: bytes, value: JsonValue) -> bool:
    """True when ``value``, orjson's parse of ``body``, is exactly what :func:`loads`'s
    strict parse returns, by :func:`fast_loads`'s test (passes over the bytes)."""
    if _ESCAPED_COLON in body or _LONG_NUMBER in body.translate(_DIGITS):
        return False
    return _written_back(body, value)


def _written_back(body: bytes, value: JsonValue) -> bool:
    try:
        written = orjson.dumps(value)  # nested deeper than orjson writes: an error too
    except orjson.JSONEncodeError:
        return False
    return written.count(b":") == body.count(b":")


_DEEPEST = 256
"""Values nested deeper take the strict parse (which answers ``TOO_DEEP`` past the
interpreter's recursion limit, where orjson goes on to 1,024 levels)."""
_FLOAT_LIMIT = 2.0**63
"""orjson reads an integer past 64 bits as a float: floats this large take the strict
parse (which reads such an integer as an ``int``)."""


def walked(body: bytes, value: JsonValue) -> bool:
    """True when ``value``, orjson's parse of ``body``, is exactly what :func:`loads`'s
    strict parse returns: :func:`fast_loads`'s test by a walk of ``value`` instead of
    passes over the bytes.

    Repeated keys are found by counting the body's colons against the members plus the
    colons inside strings of ``value`` (:func:`_colons`; no ``\\u003`` escape in the
    body), floats past 2**63 (where orjson reads an integer beyond 64 bits) and values
    nested deeper than 256 levels are refused. The walk costs per value, the write-back
    per byte: this is for bodies of few large strings (a 200 KB tool result), where it
    saves writing and scanning the string again.
    """
    return _ESCAPED_COLON not in body and _colons(value, 0) == body.count(b":")


def _colons(value: JsonValue, depth: int) -> int:
    """Members of the objects in ``value`` plus the colons inside its strings (keys
    too); -1 for a value nested deeper than :data:`_DEEPEST` or holding a float past
    :data:`_FLOAT_LIMIT`. (Scalars are counted in their container's loop: one call per
    container, not per value.)"""
    if isinstance(value, dict):
        total = len(value)
        for key in value:
            if ":" in key:
                total += key.count(":")
        children: Iterable[JsonValue] = value.values()
    elif isinstance(value, list):
        total, children = 0, value
    elif isinstance(value, str):
        return value.count(":")
    else:
        return _colons([value], depth)
    for child in children:
        if isinstance(child, str):
            total += child.count(":")
        elif isinstance(child, (dict, list)):
            inner = _colons(child, depth + 1) if depth < _DEEPEST else -1
            if inner < 0:
                return -1
            total += inner
        elif isinstance(child, float) and not -_FLOAT_LIMIT < child < _FLOAT_LIMIT:
            return -1
    return total


def loads(body: bytes) -> JsonValue:
    """``body`` (UTF-8) parsed refusing repeated keys and too deep nesting
    (:class:`StrictJsonError`; ``ValueError`` for malformed JSON or invalid UTF-8). Lone
    surrogates are the caller's to check (:func:`check_body_surrogates`): the AG-UI binding
    answers them with its own run error."""
    fast = fast_loads(body)
    return fast if fast is not None else strict_loads(body)


def strict_loads(body: bytes) -> JsonValue:
    """:func:`loads` by ``json`` alone (what the orjson path must equal)."""
    try:
        return cast(JsonValue, DECODER.decode(body.decode("utf-8")))
    except RecursionError:
        raise StrictJsonError("", TOO_DEEP) from None


def check_body_surrogates(body: bytes, value: JsonValue, start: int = 0) -> None:
    """:func:`check_surrogates` on ``value`` parsed from ``body``, when ``body`` holds a
    surrogate escape at all (a byte search: bodies without one are not walked).

    ``start``: the body's first that many bytes are known to pass (a history prefix an
    earlier request passed with, ending after a ``}``); only the rest is searched, and
    ``value`` is then what was parsed from the rest (with the members before the history).
    """
    if _SURROGATE_ESCAPE.search(body, start):
        check_surrogates(value)


def check_surrogates(value: JsonValue, path: str = "") -> None:
    """Refuse a string holding a lone surrogate anywhere in ``value``."""
    if isinstance(value, str):
        if not _encodable(value):
            raise StrictJsonError(path, "a lone UTF-16 surrogate has no UTF-8 form")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_surrogates(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                raise StrictJsonError(path, "a lone UTF-16 surrogate has no UTF-8 form")
            check_surrogates(item, f"{path}.{key}" if path else key)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def object_shaped(body: bytes) -> bool:
    """A cheap check for answers forwarded unparsed: ``{`` … ``}`` around the body (an
    HTML error page or plain text from something in front of the upstream fails it)."""
    stripped = body.strip()
    return stripped.startswith(b"{") and stripped.endswith(b"}")
