"""A request body split around its history array without decoding that array by ``json``.

:func:`.history_cache.split_body` reads every top-level member with ``json``'s decoder to
learn where the history array ends; on a 200 KB tool result that decode is most of the
request's cost. :func:`split` gives the same :class:`~.history_cache.Split` from the
body parsed by orjson where that is provably the strict parse (``strict_json``), and
finds the offsets by decoding only the members around the array:

* the members before the history member are read forward from ``{`` as
  ``split_body`` reads them (the history member's offset, and ``model``'s if first);
* the members after it are read forward from the key that follows the history member
  in the parsed object, found by searching the body backwards for that key's JSON
  string (a key of letters, digits, ``_``, ``-`` or ``.``). A match there is a string
  token of the body (a quote not escaped, followed by such a character, opens a string:
  after a string's closing quote only punctuation or white space may follow); read from
  there, members must reach the body's closing ``}`` and its end, which a key nested in
  any value cannot (its object's ``}`` comes first, then more closing brackets). So the
  match that reads is the top-level member, and the ``]`` just before its ``,`` closes
  the history array (members are in body order; the strict parse refuses repeated keys);
* with no member after it, the array's ``]`` is the last one before the closing ``}``.

Anything else (the parse not provably strict, a key spelled otherwise, no match that
reads) is ``None``: the caller takes ``split_body``, which answers as before. Invariant
(tested with Hypothesis): :func:`split` is ``None`` or equal to ``split_body``.
"""

from __future__ import annotations

import re

import orjson

from interlock.gateway import strict_json
from interlock.gateway.history_cache import Split
from interlock.transcript import JsonValue

_DECODER = strict_json.DECODER
_SPACE = re.compile(r"[ \t\n\r]*")
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_SPACES = " \t\n\r"
ITEM_BYTES = 1024
"""From this many bytes per history item, orjson's parse is checked by a walk of its
values (``strict_json.walked``: large strings, a 200 KB tool result); below, by writing
it back and counting (``strict_json.rewritten``: many short messages, where the walk
costs about what ``split_body``'s ``json`` decode does)."""


def split(body: bytes, text: str, history_key: str) -> Split | None:
    """``split_body(text, history_key)`` for ``body`` (``text`` decoded), or ``None`` when
    this path cannot be sure (see the module's docstring)."""
    try:
        payload: JsonValue = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(payload, dict):
        return None
    history = payload.get(history_key)
    if not isinstance(history, list) or not history:
        return None
    few_values = len(body) >= ITEM_BYTES * len(history)
    checked = strict_json.walked if few_values else strict_json.rewritten
    if not checked(body, payload):
        return None
    keys = list(payload)
    index = keys.index(history_key)
    head = _head(text, keys[:index])
    if head is None:
        return None
    history_start, model_at = head
    if index + 1 == len(keys):
        array_end = _closing_bracket(text, _before_spaces(text, len(text)) - 1)
    else:
        tail = _tail(text, keys[index + 1 :], history_start)
        if tail is None:
            return None
        comma, tail_model_at = tail
        array_end = _closing_bracket(text, comma)
        model_at = max(model_at, tail_model_at)
    prefix_end = _last_item_end(text, array_end) if array_end >= 0 else -1
    if prefix_end < 0:
        return None
    return Split(
        payload=payload,
        head={name: payload[name] for name in keys[:index]},
        prefix_end=_utf8_offset(text, prefix_end),
        head_bytes=_utf8_offset(text, history_start),
        model_at=_utf8_offset(text, model_at) if model_at >= 0 else -1,
    )


def _head(text: str, names: list[str]) -> tuple[int, int] | None:
    """(offset of the member after ``names``, offset of ``model``'s value or -1): the
    members ``names`` read from the body's ``{`` on."""
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return None
    return _members(text, _skip(text, position + 1), names, ",")


def _tail(text: str, names: list[str], history_start: int) -> tuple[int, int] | None:
    """(offset of the ``,`` before the top-level member ``names[0]``, offset of
    ``model``'s value among ``names`` or -1), the members ``names`` read from that key to
    the body's end."""
    if not _SIMPLE_KEY.fullmatch(names[0]):
        return None
    needle = f'"{names[0]}"'
    found = text.rfind(needle, history_start)
    while found > history_start:
        model_at = None if _escaped(text, found) else _members_to_end(text, found, names)
        if model_at is not None:
            before = _before_spaces(text, found) - 1
            return (before, model_at) if text[before] == "," else None
        found = text.rfind(needle, history_start, found)
    return None


def _members_to_end(text: str, position: int, names: list[str]) -> int | None:
    """Offset of ``model``'s value (or -1) when the members ``names`` read from
    ``position`` end with the body's closing ``}``, else ``None``."""
    read = _members(text, position, names, "}")
    return read[1] if read is not None and read[0] == len(text) else None


def _members(text: str, position: int, names: list[str], closing: str) -> tuple[int, int] | None:
    """(offset after the members ``names`` read from ``position``, each followed by
    ``,`` and the last by ``closing``; offset of ``model``'s value or -1), or ``None``
    when the text there is not those members."""
    model_at = -1
    try:
        for number, name in enumerate(names):
            key, position = _DECODER.raw_decode(text, position)
            position = _skip(text, position)
            if key != name or not text.startswith(":", position):
                return None
            value_at = _skip(text, position + 1)
            _, end = _DECODER.raw_decode(text, value_at)
            if name == "model":
                model_at = value_at
            position = _skip(text, end)
            expected = closing if number + 1 == len(names) else ","
            if not text.startswith(expected, position):
                return None
            position = _skip(text, position + 1)
    except ValueError:
        return None
    return position, model_at


def _escaped(text: str, quote: int) -> bool:
    """True when the quote at ``quote`` follows an odd run of backslashes."""
    start = quote
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return (quote - start) % 2 == 1


def _closing_bracket(text: str, after: int) -> int:
    """Offset after the ``]`` that is the last non-space before ``text[after]``, or -1."""
    end = _before_spaces(text, after)
    return end if end > 0 and text[end - 1] == "]" else -1


def _last_item_end(text: str, array_end: int) -> int:
    """Offset after the last item of the array that ends (``]``) just before ``array_end``
    (as ``split_body`` finds it), or -1 when that item is not an object."""
    end = array_end - 1
    while text[end - 1] in _SPACES:
        end -= 1
    return end if text[end - 1] == "}" else -1


def _before_spaces(text: str, end: int) -> int:
    """Offset after the last non-space before ``end`` (0 when there is none)."""
    while end > 0 and text[end - 1] in _SPACES:
        end -= 1
    return end


def _skip(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


def _utf8_offset(text: str, offset: int) -> int:
    return offset if text.isascii() else len(text[:offset].encode())
