"""A ``MESSAGES_SNAPSHOT`` that fits the client: the newest messages within a size budget.

The official ``@ag-ui/client`` refuses any single SSE event over 10 MiB, so a long
thread's full snapshot would break the run it ends. :func:`window_messages` keeps the
longest tail of the rendered thread whose compact JSON fits ``limit`` characters, never
starting on a ``tool`` or ``reasoning`` message cut off from the assistant message it
belongs to. The thread stays whole on the server: a client holding only the window sends
it back like any history (the server's ids, so nothing is forged) and the run continues
over the full stored thread; the left-out count travels in the snapshot so a frontend
can say "earlier messages not shown".
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.codecs.agui._wire import compact_json
from interlock.transcript import JsonObject

SNAPSHOT_LIMIT = 8 * 1024 * 1024
"""Characters of messages JSON one snapshot may hold (below the client's 10 MiB per event)."""


def window_messages(
    messages: Sequence[JsonObject], limit: int = SNAPSHOT_LIMIT
) -> tuple[list[JsonObject], int]:
    """``(kept tail, number of messages left out)``; the whole list when it fits.

    The size counted is the sum of each message's compact JSON text plus one separator,
    which bounds the ``messages`` array as the event carries it. A single message larger
    than ``limit`` at the end leaves an empty window.
    """
    total = 0
    start = len(messages)
    for position in range(len(messages) - 1, -1, -1):
        total += len(compact_json(messages[position])) + 1
        if total > limit:
            break
        start = position
    while start < len(messages) and start > 0 and _dependent(messages[start]):
        start += 1
    return list(messages[start:]), start


def _dependent(message: JsonObject) -> bool:
    """A message that reads wrongly without the one before it (a tool result, reasoning)."""
    return message.get("role") in ("tool", "reasoning")
