"""State a run shares with its frontend (AG-UI ``state``), readable and changeable by tools.

:class:`AgentState` is one run's JSON document: tools read it and change it through
:attr:`ToolContext.state <interlock.core_loop.ToolContext.state>`; the caller of the loop
reads :attr:`AgentState.version` after each event to learn that something changed (the
AG-UI gateway then sends ``STATE_DELTA``). Values are copied in and out, so nobody holds a
reference into the document; changes are serialized by a lock (sync tools run in worker
threads). ``forwarded_props`` is the frontend's ``forwardedProps``, read-only.
"""

from __future__ import annotations

import json
import threading

from interlock.core_loop._sendable import json_problem
from interlock.transcript import JsonObject, JsonValue


def _copy(value: JsonValue) -> JsonValue:
    """A deep copy through JSON (tuples become lists); ``None`` and an empty object, the
    usual state, without the round trip."""
    if value is None:
        return None
    if type(value) is dict and not value:
        return {}
    return json.loads(json.dumps(value))


def _checked_copy(value: JsonValue) -> JsonValue:
    """A copy of a value a tool sets; ``ValueError`` (the tool fails, nothing is changed)
    if no store or frontend could carry it (:mod:`._sendable`)."""
    problem = json_problem(value)
    if problem is not None:
        raise ValueError(f"the state cannot hold {problem}")
    return _copy(value)


class AgentState:
    """A run's shared JSON state (module docstring). ``version`` counts changes."""

    __slots__ = ("_lock", "_value", "forwarded_props", "version")

    def __init__(self, value: JsonValue = None, *, forwarded_props: JsonValue = None) -> None:
        self._value = _copy(value)
        self._lock = threading.Lock()
        self.version = 0
        self.forwarded_props = _copy(forwarded_props)

    @property
    def value(self) -> JsonValue:
        """A copy of the current document."""
        with self._lock:
            return _copy(self._value)

    def set(self, value: JsonValue) -> None:
        """Replace the whole document (``ValueError`` if it is not JSON, or holds a lone
        surrogate, ``NaN`` or infinity)."""
        copied = _checked_copy(value)
        with self._lock:
            self._value = copied
            self.version += 1

    def update(self, fields: JsonObject) -> None:
        """Set top-level keys of an object document (``None`` becomes ``{}`` first;
        ``ValueError`` as :meth:`set`)."""
        copied = _checked_copy(fields)
        assert isinstance(copied, dict)
        with self._lock:
            current = self._value if self._value is not None else {}
            if not isinstance(current, dict):
                raise TypeError("update() needs an object state; use set()")
            self._value = {**current, **copied}
            self.version += 1
