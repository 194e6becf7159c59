"""What a store can hold: JSON text that encodes as UTF-8.

Python's ``json`` module accepts two things no store (nor any client) can carry: a lone
UTF-16 surrogate in a string (``"\\ud83d"``, what ``JSON.stringify`` writes for an emoji
cut in half) and the non-JSON numbers ``NaN``/``Infinity``. Input holding either is
refused before anything runs, naming the first such field, so a run never fails at its
save after a tool already ran.
"""

from __future__ import annotations

import json
import math
from typing import cast

import orjson

from interlock.transcript import JsonValue


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _walk(value: object, path: str) -> str | None:
    if isinstance(value, str):
        return path if _has_lone_surrogate(value) else None
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in cast(dict[str, object], value).items():
            if _has_lone_surrogate(key):
                return f"{path}.<key>"
            found = _walk(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(cast(list[object], value)):
            found = _walk(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def unstorable_field(value: JsonValue, root: str = "$") -> str | None:
    """The path of the first value in ``value`` a store cannot hold, or ``None``.

    Paths read like ``$.state.note`` or ``$.messages[2].content``. The common case (all
    storable) costs one orjson encode: orjson writes every string as UTF-8 (it refuses a
    lone surrogate) and ``NaN`` / ``Infinity`` as ``null``, so a text it writes holding no
    ``null`` at all is storable. Anything else (orjson refused, or a ``null`` somewhere)
    is decided by the standard library's encoder, as before.
    """
    try:
        written: bytes | None = orjson.dumps(value, option=_ONLY_JSON)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, a 65-bit integer…
        written = None
    if written is not None and written.find(b"null") < 0:
        return None
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return _walk(value, root) or root
    return None


_ONLY_JSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Objects ``json`` cannot write are not written by orjson either (they go to ``json``)."""
