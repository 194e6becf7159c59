"""RFC 6902 JSON Patch between two states, for ``STATE_DELTA``.

Uses ``jsonpatch`` (python-json-patch, the reference implementation of RFC 6902 in Python,
also what the official client's ``fast-json-patch`` interoperates with); it ships no type
information, hence the import through :mod:`importlib`.
"""

from __future__ import annotations

import importlib
from typing import Any, cast

from interlock.transcript import JsonObject, JsonValue

_JSONPATCH: Any = importlib.import_module("jsonpatch")


def state_patch(before: JsonValue, after: JsonValue) -> list[JsonObject]:
    """The operations that turn ``before`` into ``after`` (empty when equal).

    A document that is not an object or array on either side is replaced whole
    (``replace`` at the root ``""``).
    """
    if before == after:
        return []
    if not isinstance(before, dict | list) or not isinstance(after, dict | list):
        return [{"op": "replace", "path": "", "value": after}]
    return cast(list[JsonObject], list(_JSONPATCH.make_patch(before, after)))
