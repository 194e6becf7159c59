"""Request JSON as strictly as the gateway needs it: what it cannot forward faithfully,
it refuses (400) instead of failing later with a 500.

* A repeated key is refused: ``json.loads`` keeps the last value, so the gateway would
  route and check one ``"model"`` while a passed-through body carries both to the upstream.
* A lone UTF-16 surrogate escape (``"\\ud800"``) is refused: it has no UTF-8 form, so it
  could be neither re-encoded for an upstream nor stored.
* Nesting deeper than the parser's recursion limit is refused (``RecursionError`` would
  otherwise escape as a 500); the proxy also answers a ``RecursionError`` met later, in a
  codec walking a deep but parseable value, with this 400.
"""

from __future__ import annotations

import json
import re
from typing import cast

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


def loads(body: bytes) -> JsonValue:
    """``body`` (UTF-8) parsed refusing repeated keys and too deep nesting
    (:class:`StrictJsonError`; ``ValueError`` for malformed JSON or invalid UTF-8). Lone
    surrogates are the caller's to check (:func:`check_body_surrogates`): the AG-UI binding
    answers them with its own run error."""
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
