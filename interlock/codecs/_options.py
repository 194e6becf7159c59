"""The shared generation options a dialect has no field for, and the warning each one gets.

Every encoder writes the :class:`~interlock.transcript.GenerationOptions` its dialect can
carry and calls :func:`unsent_options` for the rest, so an option set by the client never
disappears without an ``option_dropped`` warning naming it. Several candidates and token
log-probabilities are options too (the answer brings them back:
``Response.alternatives``, ``TextPart.logprobs``); their decoders check them as the services
do (:func:`check_answer_options`), and a dialect that answers one candidate refuses or warns
about several (:func:`one_candidate`).
"""

from __future__ import annotations

from typing import Final

from interlock.transcript import (
    DecodeError,
    GenerationOptions,
    LossyHistoryError,
    ReplayPolicy,
    TranslationWarning,
)

SHARED: Final = (
    "top_k",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "metadata",
    "candidate_count",
    "logprobs",
    "top_logprobs",
)
"""Options only some dialects carry (the ones every dialect has are encoded directly)."""

MAX_TOP_LOGPROBS: Final = 20
"""The most alternatives per token OpenAI and Gemini return (``top_logprobs`` / ``logprobs``)."""


def check_answer_options(
    options: GenerationOptions, names: dict[str, str], *, top_needs_logprobs: bool
) -> None:
    """Refuse what every service with these settings refuses (raises :class:`DecodeError`
    at the wire name in ``names``, keyed by option): fewer than one candidate, a number of
    top tokens outside 0..20, and (``top_needs_logprobs``: Chat) asking for top tokens
    without ``logprobs: true``. Checked at decode, so a client hears it in its own dialect whatever
    the upstream."""
    count = options.candidate_count
    if count is not None and count < 1:
        raise DecodeError(names["candidate_count"], f"must be at least 1, got {count}")
    top = options.top_logprobs
    if top is not None and not 0 <= top <= MAX_TOP_LOGPROBS:
        where = names["top_logprobs"]
        raise DecodeError(where, f"must be from 0 to {MAX_TOP_LOGPROBS}, got {top}")
    if top_needs_logprobs and top and options.logprobs is not True:
        where = names["top_logprobs"]
        raise DecodeError(where, f"{names['logprobs']} must be true when {where} is set")


def unsent_options(
    options: GenerationOptions, carried: frozenset[str], dialect: str
) -> list[TranslationWarning]:
    """One ``option_dropped`` warning per set option of :data:`SHARED` not in ``carried``."""
    return [
        TranslationWarning(
            code="option_dropped",
            location=f"options.{name}",
            message=f"{dialect} has no {name} setting; not sent",
        )
        for name in SHARED
        if name not in carried and getattr(options, name) is not None
    ]


def one_candidate(
    options: GenerationOptions, policy: ReplayPolicy, dialect: str
) -> list[TranslationWarning]:
    """For a dialect that answers one candidate (Responses, Anthropic): asking for several
    raises :class:`LossyHistoryError` under a strict policy (the client would get fewer than
    it asked for) and is an ``option_dropped`` warning otherwise; one is a warning too."""
    count = options.candidate_count
    if count is None:
        return []
    message = f"{dialect} answers one candidate; {count} asked for, candidate count not sent"
    if count > 1 and policy.mode == "strict":
        raise LossyHistoryError("options.candidate_count", message, code="candidates_unsupported")
    return [
        TranslationWarning(
            code="option_dropped", location="options.candidate_count", message=message
        )
    ]
