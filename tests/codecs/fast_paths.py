"""Shared by the history fast-path properties of every dialect: what a decode gives, compared
with the general path's."""

from __future__ import annotations

import json
from collections.abc import Callable

from interlock.transcript import DecodeError, Encoded, LossyHistoryError


def outcome(action: Callable[[], object]) -> object:
    """The result's repr (dict key order included), or the error."""
    try:
        return repr(action())
    except DecodeError as error:
        return ("DecodeError", error.path, str(error))


def encoded(action: Callable[[], Encoded]) -> object:
    """An encode's payload text (key order included) and warnings, or the refusal."""
    try:
        result = action()
    except LossyHistoryError as error:
        return ("LossyHistoryError", error.location, error.code, str(error))
    return json.dumps(result.payload), repr(result.warnings)
