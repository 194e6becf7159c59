"""Values no model, frontend or store can carry, caught where a tool produces them.

Python strings may hold a lone UTF-16 surrogate (``"\\ud83d"``: half of an emoji), and
Python's ``json`` writes ``NaN`` and ``Infinity``. Neither survives the trip: UTF-8
cannot encode the first, JSON has no such numbers, so the thread's save or the next
model request would fail *after* the tool ran. The loop therefore checks what a tool
hands back (its result, its state changes) the moment it does, so the step is recorded
as an ordinary failed result and the run goes on.
"""

from __future__ import annotations

import json

from interlock.transcript import TextPart, ToolResultPart, to_json

NOT_UNICODE = "text that is not valid Unicode (a lone UTF-16 surrogate)"
NOT_JSON = "a number JSON cannot hold (NaN or infinity)"


def json_problem(value: object) -> str | None:
    """Why ``value`` (a JSON value) cannot be sent or stored, or ``None`` when it can."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return NOT_UNICODE
    except ValueError:
        return NOT_JSON
    return None


def output_problem(result: ToolResultPart) -> str | None:
    """The first output part of ``result`` that cannot be sent or stored, and why
    (``"output[1]: …"``); ``None`` when every part can."""
    for index, part in enumerate(result.output):
        if isinstance(part, TextPart):
            if part.text.isascii():
                continue
            try:
                part.text.encode("utf-8")
            except UnicodeEncodeError:
                return f"output[{index}]: {NOT_UNICODE}"
            continue
        problem = json_problem(to_json(part))
        if problem is not None:
            return f"output[{index}]: {problem}"
    return None
