"""Shared by the history fast-path properties of every dialect: what a decode gives, compared
with the general path's."""

from __future__ import annotations

from collections.abc import Callable

from interlock.transcript import DecodeError


def outcome(action: Callable[[], object]) -> object:
    """The result's repr (dict key order included), or the error."""
    try:
        return repr(action())
    except DecodeError as error:
        return ("DecodeError", error.path, str(error))
