"""The loop's view of a model, and a scripted model for tests.

The loop knows no wire format: a model is anything that turns a canonical
:class:`~interlock.transcript.Request` into an async stream of transcript updates. The
gateway implements it with a codec plus an HTTP upstream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, TypeAlias

from interlock.transcript import Request, Response, Update, response_to_updates

ScriptEntry: TypeAlias = Response | Sequence[Update] | Exception
"""One scripted model turn: a complete response, the exact updates to stream, or an
exception the call raises (a provider failure: connection lost, 5xx, …)."""


class ChatModel(Protocol):
    """A model the loop can call.

    ``stream`` is an async generator of updates for one model call. Cancelling the task
    that consumes it (or closing it early) must cancel the underlying request.
    """

    def stream(self, request: Request) -> AsyncIterator[Update]:
        """Stream the updates of one response to ``request``."""
        ...


class ScriptExhaustedError(RuntimeError):
    """The scripted model was called more times than it has entries."""


class ScriptedModel:
    """Replays scripted turns in order and records every request it received.

    Each entry is a :class:`~interlock.transcript.Response` (streamed as its canonical
    updates), a list of updates replayed verbatim, or an exception raised by that call
    (after the request is recorded). A call past the end raises
    :class:`ScriptExhaustedError` naming the call number, so a test that expects no further
    model call fails loudly if one happens.
    """

    def __init__(self, script: Sequence[ScriptEntry]) -> None:
        self._script: list[ScriptEntry] = list(script)
        self.requests: list[Request] = []

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been used."""
        return len(self._script) - len(self.requests)

    async def stream(self, request: Request) -> AsyncIterator[Update]:
        """Record ``request`` and stream the next scripted turn."""
        position = len(self.requests)
        self.requests.append(request)
        if position >= len(self._script):
            raise ScriptExhaustedError(
                f"scripted model called {position + 1} times but has {len(self._script)} entries"
            )
        entry = self._script[position]
        if isinstance(entry, Exception):
            raise entry
        updates = response_to_updates(entry) if isinstance(entry, Response) else entry
        for update in updates:
            yield update
