"""OpenRouter's reasoning settings ⇄ the canonical reasoning options.

OpenRouter controls reasoning with a ``reasoning`` object on the request — ``effort`` (an
OpenAI-style level), ``max_tokens`` (a thinking budget, Anthropic-style; OpenRouter takes one
of the two, not both), ``exclude`` (reason, but leave the reasoning out of the answer),
``enabled`` — and with the older ``include_reasoning`` boolean. They correspond to canonical
options, so another dialect's upstream gets them as its own settings:

* ``reasoning.effort`` → ``reasoning_effort`` (unless the body also has a top-level
  ``reasoning_effort``: that one is the canonical effort, and ``reasoning.effort`` stays kept);
* ``reasoning.max_tokens`` → ``thinking_budget``;
* ``reasoning.exclude`` → ``include_reasoning`` (negated); ``include_reasoning`` → the same
  (when ``reasoning.exclude`` does not already say it).

A key of a type OpenRouter does not define, ``enabled`` (no canonical switch: whether a model
reasons by default is the model's) and any other key stay kept verbatim in the ``reasoning``
object of ``Request.extra`` (another dialect's encoder names it in a ``field_dropped``
warning). The keys' order is kept in the layout, so a same-dialect round trip is exact.

Encoding for an OpenRouter upstream (or as decoded, when the request came so) writes the
options back there: ``thinking_budget`` as ``reasoning.max_tokens`` (when no effort is set),
``include_reasoning`` as ``reasoning.exclude``. A vLLM-style upstream (``reasoning``
dialect) takes ``include_reasoning`` as a top-level boolean. Other Chat upstreams get the
effort as ``reasoning_effort`` and a warning for the rest (:mod:`._request`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeGuard

from interlock.codecs.openai_chat._wire import LAYOUT, ReasoningDialect, extra_of
from interlock.transcript import GenerationOptions, JsonObject, JsonValue

REASONING = "reasoning"
INCLUDE = "include_reasoning"
_ORDER = "reasoning_keys"
"""Layout key: the ``reasoning`` object's keys, in the order they came."""
_INCLUDE_SENT = "include_reasoning"
"""Layout key: ``include_reasoning`` came as a top-level boolean."""
_NAMES = {
    "effort": "reasoning_effort",
    "max_tokens": "thinking_budget",
    "exclude": "include_reasoning",
}
"""The canonical option each ``reasoning`` key carries."""


@dataclass(frozen=True, slots=True)
class ReasoningSettings:
    """What a request's ``reasoning`` / ``include_reasoning`` said, as canonical options, and
    the rest of its ``reasoning`` object (kept verbatim; ``None`` when nothing is left)."""

    effort: str | None = None
    budget: int | None = None
    include: bool | None = None
    residue: JsonObject | None = None
    consumed: frozenset[str] = frozenset()
    """The top-level keys decoded here (the caller marks them consumed)."""


def decode_settings(body: JsonObject, layout: JsonObject) -> ReasoningSettings:
    """The canonical options in ``body``'s ``reasoning`` and ``include_reasoning`` (see
    module); a ``reasoning`` that is not an object stays kept as it came."""
    settings = body.get(REASONING)
    effort: str | None = None
    budget: int | None = None
    include: bool | None = None
    residue: JsonObject | None = None
    consumed: set[str] = set()
    if isinstance(settings, dict):
        consumed.add(REASONING)
        layout[_ORDER] = list[JsonValue](settings)
        residue = {}
        for key, value in settings.items():
            if key == "effort" and isinstance(value, str) and "reasoning_effort" not in body:
                effort = value
            elif key == "max_tokens" and _is_count(value):
                budget = value
            elif key == "exclude" and isinstance(value, bool):
                include = not value
            else:
                residue[key] = value
    sent = body.get(INCLUDE)
    if isinstance(sent, bool) and include is None:
        include = sent
        consumed.add(INCLUDE)
        layout[_INCLUDE_SENT] = True
    return ReasoningSettings(
        effort=effort,
        budget=budget,
        include=include,
        residue=residue or None,
        consumed=frozenset(consumed),
    )


def _is_count(value: JsonValue) -> TypeGuard[int]:
    """True for an integer (not a boolean) of at least 0."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def encode_settings(
    options: GenerationOptions,
    extra: Mapping[str, JsonObject],
    dialect: ReasoningDialect | None,
    payload: JsonObject,
) -> frozenset[str]:
    """Write the options an upstream of ``dialect`` takes in OpenRouter's (or vLLM's) fields
    into ``payload``; the names of the canonical options written (the caller sends the others
    its own way, or warns)."""
    layout = extra_of(extra, LAYOUT)
    order = layout.get(_ORDER)
    came = isinstance(order, list) or layout.get(_INCLUDE_SENT) is True
    written: set[str] = set()
    if dialect == "reasoning" and options.include_reasoning is not None:
        payload[INCLUDE] = options.include_reasoning
        written.add("include_reasoning")
    if dialect != "openrouter" and not (dialect is None and came):
        return frozenset(written)
    keys = [key for key in order if isinstance(key, str)] if isinstance(order, list) else []
    kept = extra_of(extra).get(REASONING)
    residue: JsonObject = kept if isinstance(kept, dict) else {}
    values = _values(options, keys, layout.get(_INCLUDE_SENT) is True)
    values = {key: value for key, value in values.items() if key not in residue}
    reasoning: JsonObject = {}
    for key in [*keys, *(key for key in values if key not in keys)]:
        if key in residue:  # kept as it came (no canonical counterpart, or not taken)
            reasoning[key] = residue[key]
        elif key in values:
            reasoning[key] = values[key]
    if reasoning or isinstance(order, list):
        payload[REASONING] = reasoning
    written.update(_NAMES[key] for key in values)
    if layout.get(_INCLUDE_SENT) is True and options.include_reasoning is not None:
        payload[INCLUDE] = options.include_reasoning
        written.add("include_reasoning")
    return frozenset(written)


def _values(options: GenerationOptions, keys: list[str], include_sent: bool) -> JsonObject:
    """The ``reasoning`` keys the options fill: ``effort`` where it came from, ``max_tokens``
    unless an effort is sent instead (OpenRouter takes one), ``exclude`` unless
    ``include_reasoning`` came as its own field."""
    values: JsonObject = {}
    if "effort" in keys and options.reasoning_effort is not None:
        values["effort"] = options.reasoning_effort
    budget = options.thinking_budget
    either = "max_tokens" in keys or not options.reasoning_effort
    if budget is not None and budget >= 0 and either:
        values["max_tokens"] = budget
    if options.include_reasoning is not None and not include_sent:
        values["exclude"] = not options.include_reasoning
    return values
