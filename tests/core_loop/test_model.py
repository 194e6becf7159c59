"""The scripted model: replays entries, records requests, fails loudly when exhausted."""

from __future__ import annotations

import pytest

from interlock.core_loop import ScriptedModel, ScriptExhaustedError
from interlock.transcript import (
    Message,
    PartStarted,
    Request,
    Response,
    ResponseFinished,
    TextPart,
    fold_updates,
)


async def test_scripted_model_replays_and_records() -> None:
    response = Response(message=Message(role="assistant", parts=(TextPart(text="a"),)), id="r1")
    raw = [PartStarted(index=0, part=TextPart(text="b")), ResponseFinished(finish_reason="stop")]
    model = ScriptedModel([response, raw])
    request = Request(model="m", messages=())
    first = [update async for update in model.stream(request)]
    second = [update async for update in model.stream(request)]
    assert fold_updates(first) == response
    assert second == raw
    assert model.requests == [request, request] and model.remaining == 0
    with pytest.raises(ScriptExhaustedError, match="called 3 times"):
        _ = [update async for update in model.stream(request)]


async def test_scripted_exception_entry_is_raised_after_recording_the_request() -> None:
    failure = ConnectionError("upstream closed the connection")
    model = ScriptedModel([failure, Response(message=Message(role="assistant", parts=()))])
    request = Request(model="m", messages=())
    with pytest.raises(ConnectionError) as raised:
        _ = [update async for update in model.stream(request)]
    assert raised.value is failure
    assert model.requests == [request] and model.remaining == 1
    assert [update async for update in model.stream(request)], "the next entry still plays"
