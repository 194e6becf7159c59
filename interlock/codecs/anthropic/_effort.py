"""How each Anthropic model takes a reasoning effort, and the canonical effort sent that way.

Claude models express effort in one of three ways (Anthropic's effort, adaptive and extended
thinking documentation):

* ``output_config.effort`` with the levels the model has (:class:`EffortSupport` ``levels``):
  ``low`` / ``medium`` / ``high`` on Claude Opus 4.5; ``max`` too on Opus 4.6, Sonnet 4.6 and
  Mythos Preview; ``xhigh`` too on Opus 4.7 and later, the Claude 5 family and Haiku 5.5.
  Adaptive thinking (``thinking: {"type": "adaptive"}``) comes with it from the 4.6
  generation on; from Opus 4.7 on it is the only thinking mode (a ``budget_tokens`` is
  refused), and the models documented as always thinking refuse ``disabled`` too;
* only a thinking budget (``thinking: {"type": "enabled", "budget_tokens": N}``, at least
  1,024 and below ``max_tokens``): Sonnet 4.5, Haiku 4.5, Opus 4.1 and older, Sonnet 3.7;
* no thinking at all: the other Claude 3 models.

:func:`effort_support` picks the row by the model's name (its ``claude-…`` part, so Bedrock
and Vertex ids match too); names it does not know take a budget only, the form every
Anthropic-compatible vendor (DeepSeek, Moonshot, MiniMax…) also takes, so another vendor's
service never gets ``output_config.effort`` by default. The gateway overrides the levels
per model (``effort_levels`` in the config, :attr:`ReplayPolicy.effort_levels`): ``[]`` is
a budget-only model.

:func:`encode_effort` sends a canonical effort the model's way. A level the model lacks goes
as the nearest one it has (ties go to the lower, cheaper level) with a
``reasoning_effort_mapped`` warning; ``none`` turns thinking off (``disabled``; on a model
that cannot, the lowest level, with that warning); an effort on a budget-only model becomes
the budget of :data:`BUDGETS` (``reasoning_effort_as_budget``), kept below a ``max_tokens``
the client set with room for an answer (none left: ``reasoning_effort_dropped``). A level no
dialect names is refused under ``strict`` (``reasoning_effort_unsupported``) and dropped
with a warning under ``degrade``. :func:`effort_violation` is the service's own check of a
request body, for the emulator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from interlock.codecs.anthropic._rules import Violation
from interlock.codecs.anthropic._wire import DEFAULT_MAX_TOKENS, MIN_THINKING_BUDGET, PROVIDER
from interlock.transcript import JsonObject, LossyHistoryError, ReplayPolicy, Request

LEVELS: Final = ("low", "medium", "high", "xhigh", "max")
"""Every ``output_config.effort`` value the Messages API names, lowest first."""

LADDER: Final = ("none", "minimal", *LEVELS)
"""Every canonical effort (OpenAI's ``none`` / ``minimal``, Anthropic's ``max``), lowest first."""

BUDGETS: Final[dict[str, int]] = {
    "minimal": MIN_THINKING_BUDGET,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 24576,
    "max": 32768,
}
"""The thinking budget an effort becomes on a budget-only model (each maps back to the same
effort through :func:`interlock.codecs._fields.effort_for_budget`, ``xhigh`` / ``max`` to
``high``)."""

ANSWER_ROOM: Final = 1024
"""Tokens kept for the answer below a client's ``max_tokens`` when an effort becomes a budget."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EffortSupport:
    """How one model takes effort: ``levels`` of ``output_config.effort`` (empty: none),
    and which ``thinking`` types it accepts (``adaptive``, ``enabled`` with a budget,
    ``disabled``). ``known``: the row came from the model's name or the configuration."""

    levels: tuple[str, ...] = ()
    adaptive: bool = False
    budget: bool = True
    disable: bool = True
    known: bool = True


_THREE: Final = ("low", "medium", "high")
_FOUR: Final = (*_THREE, "max")
BUDGET_ONLY: Final = EffortSupport(known=False)
"""A model of unknown name, or another vendor's: a thinking budget only."""
_NO_THINKING: Final = EffortSupport(budget=False, disable=False)
_OPUS_45: Final = EffortSupport(levels=_THREE)
_GEN_46: Final = EffortSupport(levels=_FOUR, adaptive=True)
_ADAPTIVE_ONLY: Final = EffortSupport(levels=LEVELS, adaptive=True, budget=False, disable=False)
_ADAPTIVE_OFF: Final = replace(_ADAPTIVE_ONLY, disable=True)

_NAMED: Final[tuple[tuple[str, EffortSupport], ...]] = (
    ("claude-mythos-preview", replace(_ADAPTIVE_ONLY, levels=_FOUR)),
    ("claude-opus-4-5", _OPUS_45),
    ("claude-opus-4-6", _GEN_46),
    ("claude-sonnet-4-6", _GEN_46),
    ("claude-opus-5-5", _ADAPTIVE_ONLY),
    ("claude-opus-5", _ADAPTIVE_OFF),
    ("claude-haiku-5-5", _ADAPTIVE_OFF),
    ("claude-3-7-sonnet", EffortSupport()),
    ("claude-3", _NO_THINKING),
)
"""Rows by name prefix, checked in order (``claude-opus-5-5`` before ``claude-opus-5``)."""

_VERSIONED: Final = re.compile(r"claude-(?:opus|sonnet|haiku|mythos|fable)-(\d+)(?:-(\d)(?!\d))?")


def effort_support(
    model: str, issuer: str = PROVIDER, levels: tuple[str, ...] | None = None
) -> EffortSupport:
    """The row for ``model`` at vendor ``issuer``'s service, with ``levels`` (configured)
    replacing the ``output_config.effort`` levels when given."""
    found = _by_name(model) if issuer == PROVIDER else BUDGET_ONLY
    if levels is None:
        return found
    if not found.known:
        return EffortSupport(levels=levels, adaptive=bool(levels))
    return replace(found, levels=levels, budget=found.budget or not levels)


def _by_name(model: str) -> EffortSupport:
    name = model[model.find("claude-") :] if "claude-" in model else model
    for prefix, support in _NAMED:
        if name.startswith(prefix):
            return support
    match = _VERSIONED.match(name)
    if match is None:
        return BUDGET_ONLY
    version = (int(match.group(1)), int(match.group(2) or 0))
    if version >= (4, 7):
        return _ADAPTIVE_ONLY  # Opus 4.7 / 4.8, Sonnet 5 / 5.5, Fable, Mythos 5…
    return EffortSupport()  # Sonnet 4.5, Haiku 4.5, Opus 4.1 and older


Warn = Callable[[str, str, str], None]
"""Records a warning: code, location, message."""


@dataclass(frozen=True, slots=True)
class EffortWire:
    """What an effort adds to the body: an ``output_config.effort`` level, a ``thinking``
    object, a ``max_tokens`` to raise to (each ``None`` when not sent)."""

    level: str | None = None
    thinking: JsonObject | None = None
    max_tokens: int | None = None


_WHERE: Final = "options.reasoning_effort"


def encode_effort(
    request: Request, support: EffortSupport, policy: ReplayPolicy, warn: Warn
) -> EffortWire:
    """The canonical effort of ``request`` the way ``support`` takes it (module docstring);
    raises :class:`LossyHistoryError` for a level no dialect names under ``strict``."""
    effort = (request.options.reasoning_effort or "").lower()
    if effort not in LADDER:
        reason = f"reasoning effort {request.options.reasoning_effort!r} is not a level " + (
            "Anthropic or any other dialect names (" + ", ".join(LADDER) + ")"
        )
        if policy.mode == "strict":
            raise LossyHistoryError(_WHERE, reason, code="reasoning_effort_unsupported")
        warn("reasoning_effort_dropped", _WHERE, reason + "; not sent")
        return EffortWire()
    forced = request.tool_choice is not None and request.tool_choice.mode == "required"
    if effort == "none":
        return _none(request.model, support, warn)
    if support.levels:
        level = _nearest(effort, support.levels)
        if level != effort:
            warn(
                "reasoning_effort_mapped",
                _WHERE,
                f"{request.model} has no effort {effort!r}; sent as the nearest, {level!r}",
            )
        on = support.adaptive and not forced and request.options.include_reasoning is not False
        return EffortWire(level=level, thinking={"type": "adaptive"} if on else None)
    if not support.budget:
        warn("reasoning_effort_ignored", _WHERE, f"{request.model} has no thinking; not sent")
        return EffortWire()
    if forced:
        reason = "Anthropic allows no thinking while tool_choice forces a tool; not sent"
        warn("reasoning_effort_dropped", _WHERE, reason)
        return EffortWire()
    return _budget(effort, request.options.max_output_tokens, warn)


def _none(model: str, support: EffortSupport, warn: Warn) -> EffortWire:
    """``none``: thinking off, or the lowest level where it cannot be turned off."""
    if support.disable:
        return EffortWire(thinking={"type": "disabled"})
    if not support.levels:
        return EffortWire()  # the model never thinks: nothing to turn off
    lowest = support.levels[0]
    reason = f"{model} cannot turn thinking off; effort 'none' sent as {lowest!r}"
    warn("reasoning_effort_mapped", _WHERE, reason)
    return EffortWire(level=lowest)


def _nearest(effort: str, levels: tuple[str, ...]) -> str:
    """The level of ``levels`` closest to ``effort`` on :data:`LADDER` (ties: the lower)."""
    rank = LADDER.index(effort)
    return min(levels, key=lambda level: (abs(LADDER.index(level) - rank), LADDER.index(level)))


def _budget(effort: str, max_tokens: int | None, warn: Warn) -> EffortWire:
    """An effort as a thinking budget, below a client's ``max_tokens`` with room to answer."""
    budget = BUDGETS[effort]
    if max_tokens is None:
        thinking: JsonObject = {"type": "enabled", "budget_tokens": budget}
        warn("reasoning_effort_as_budget", _WHERE, _as_budget(effort, budget))
        return EffortWire(thinking=thinking, max_tokens=budget + DEFAULT_MAX_TOKENS)
    room = max_tokens - ANSWER_ROOM
    if room < MIN_THINKING_BUDGET:
        reason = (
            f"max_tokens {max_tokens} leaves no room for Anthropic's smallest thinking budget "
            f"({MIN_THINKING_BUDGET}) and an answer; effort {effort!r} not sent"
        )
        warn("reasoning_effort_dropped", _WHERE, reason)
        return EffortWire()
    budget = min(budget, room)
    warn("reasoning_effort_as_budget", _WHERE, _as_budget(effort, budget))
    return EffortWire(thinking={"type": "enabled", "budget_tokens": budget})


def _as_budget(effort: str, budget: int) -> str:
    return f"this model takes a thinking budget, not an effort: {effort!r} sent as {budget} tokens"


def effort_violation(payload: JsonObject, support: EffortSupport) -> Violation | None:
    """The error the Messages API gives for the effort and thinking type of ``payload`` on a
    model taking effort as ``support`` says; ``None`` when it accepts them. The thinking
    types are checked for models the table knows only (an unknown name takes any)."""
    config = payload.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None
    if effort is not None:
        if effort not in LEVELS:
            allowed = ", ".join(f"'{level}'" for level in LEVELS[:-1]) + f" or '{LEVELS[-1]}'"
            return Violation(f"output_config.effort: Input should be {allowed}", "output_config")
        if not support.levels:
            return Violation("This model does not support the effort parameter.", "output_config")
        if effort not in support.levels:
            return Violation(
                f"output_config.effort '{effort}' is not supported by this model; supported "
                f"values: {', '.join(support.levels)}",
                "output_config",
            )
    thinking = payload.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if not support.known or kind is None:
        return None
    accepted = {
        "adaptive": support.adaptive,
        "enabled": support.budget,
        "disabled": support.disable,
    }
    if accepted.get(str(kind), True):
        return None
    return Violation(f"thinking.type '{kind}' is not supported for this model.", "thinking")
