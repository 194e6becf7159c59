"""What an AG-UI run makes of each loop event: its frames (before serialization), and the
loop's end.

:func:`event_frames` is the one mapping from a :class:`~interlock.core_loop.LoopEvent` to
the AG-UI events the run's encoder gives for it (a streamed delta, the commonest, is
encoded by the run directly: the same call).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import assert_never

from interlock.codecs.agui import AguiEventEncoder
from interlock.core_loop import (
    ApprovalRequested,
    ClientCallsPending,
    InputRequested,
    LoopEvent,
    ModelUpdate,
    RunFinished,
    ToolFinished,
    ToolStarted,
)
from interlock.transcript import JsonObject, StreamFailed


def event_frames(encoder: AguiEventEncoder, event: LoopEvent) -> list[JsonObject]:
    """The AG-UI events ``encoder`` gives for ``event`` (none for a model stream's
    failure: the loop ends with ``ModelStreamError``, reported once, at the end)."""
    if type(event) is ModelUpdate:  # most events: matched first without a pattern
        update = event.update
        if type(update) is StreamFailed:
            return []  # ends the loop with ModelStreamError: reported once, at the end
        return encoder.encode(update, message_id=event.message_id)
    match event:
        case ModelUpdate(update=update, message_id=message_id):
            if isinstance(update, StreamFailed):
                return []  # ends the loop with ModelStreamError: reported once, at the end
            return encoder.encode(update, message_id=message_id)
        case ToolFinished(result=result, message_id=message_id):
            return encoder.tool_result(result, message_id=message_id)
        case ApprovalRequested(request=request):
            return encoder.approval_request(request)
        case InputRequested(request=request):
            return encoder.input_request(request)
        case ToolStarted() | ClientCallsPending() | RunFinished():
            return []
        case _:
            assert_never(event)


async def close_loop(iterator: AsyncIterator[LoopEvent]) -> None:
    """Close the loop ``iterator`` (an async generator: its model stream and tools with
    it)."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()
