"""Groq's server-side tool runs and vendor answer fields, counted on the wire.

Like :mod:`._wire_citations`, this reads a recorded Chat payload's JSON with none of the
codecs' code, so a decoder that ignores Groq's ``executed_tools`` (or drops the
``usage_breakdown`` of a compound system) leaves something the corpus runner finds missing:
the cross-dialect inventory only lists what a decoder produced.

* runs: the entries of choice 0's ``message.executed_tools`` (a stream: the distinct
  ``index`` values of its ``delta.executed_tools``) and of the top-level ``mcp_list_tools``
  (a stream: of every chunk's), each a hosted part;
* fields: ``usage_breakdown`` holding something, at the top level of a completion (a
  stream: of a chunk, or in a chunk's ``x_groq``): decoded as the usage's breakdown, or
  kept as a field.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from interlock.transcript import JsonValue

FIELDS = ("usage_breakdown",)


def _objects(value: JsonValue) -> Iterator[dict[str, JsonValue]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _first_choice(body: JsonValue) -> dict[str, JsonValue]:
    choices = body.get("choices") if isinstance(body, dict) else None
    empty: dict[str, JsonValue] = {}
    first = next(_objects(choices), empty)
    return first if first.get("index", 0) == 0 else empty


def _fields(holder: JsonValue) -> set[str]:
    if not isinstance(holder, dict):
        return set()
    return {name for name in FIELDS if holder.get(name) not in (None, [], {})}


def response_runs(body: JsonValue) -> tuple[int, set[str]]:
    """``(runs, fields)`` of a ``chat.completion`` body."""
    message = _first_choice(body).get("message")
    runs = message.get("executed_tools") if isinstance(message, dict) else None
    return sum(1 for _ in _objects(runs)) + _listed(body), _fields(body)


def stream_runs(events: Sequence[JsonValue]) -> tuple[int, set[str]]:
    """``(runs, fields)`` of a recorded Chat stream's event data."""
    indexes: set[str] = set()
    fields: set[str] = set()
    listed = 0
    for data in events:
        if not isinstance(data, dict):
            continue
        fields |= _fields(data) | _fields(data.get("x_groq"))
        listed += _listed(data)
        delta = _first_choice(data).get("delta")
        runs = delta.get("executed_tools") if isinstance(delta, dict) else None
        for position, run in enumerate(_objects(runs)):
            indexes.add(str(run.get("index", position)))
    return len(indexes) + listed, fields


def _listed(holder: JsonValue) -> int:
    """How many MCP tool listings a completion (or chunk) holds at its top level."""
    if not isinstance(holder, dict):
        return 0
    return sum(1 for _ in _objects(holder.get("mcp_list_tools")))
