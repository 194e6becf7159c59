"""Errors and warnings shared by every translation layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from interlock.transcript._parts import JsonObject


class LossyHistoryError(ValueError):
    """The target dialect cannot carry something the history needs.

    Raised *before* anything is sent. ``location`` is precise, e.g.
    ``messages[4].parts[1]``; ``reason`` says what would be lost and why it matters.
    """

    def __init__(self, location: str, reason: str, *, code: str = "lossy_history") -> None:
        super().__init__(f"{location}: {reason}")
        self.location = location
        self.reason = reason
        self.code = code


class DecodeError(ValueError):
    """Wire input is malformed; ``path`` names the offending field (``input[2].call_id``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.detail = message


@dataclass(frozen=True, slots=True, kw_only=True)
class TranslationWarning:
    """A deliberate, documented degradation reported alongside an encoded payload."""

    code: str
    location: str
    message: str


ReplayMode: TypeAlias = Literal["strict", "degrade"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayPolicy:
    """How an encoder treats history it cannot carry exactly.

    ``strict`` (the default) raises :class:`LossyHistoryError` whenever the target needs
    something that is missing (a Gemini signature on a current-turn call, encrypted
    reasoning for a stateless Responses replay). ``degrade`` substitutes the documented
    fallback (e.g. Gemini's ``skip_thought_signature_validator``) and reports a warning.
    ``foreign_opaque`` decides what happens to opaque payloads issued by another provider:
    they are never sent; ``drop`` drops them with a warning, ``refuse`` raises.
    ``signatures_required`` says whether the target model requires thought signatures on
    the current turn's function calls (Gemini); ``None`` lets the encoder decide by the
    model's name. ``effort_levels`` are the ``output_config.effort`` levels the target model
    takes (Anthropic; ``()``: a thinking budget only); ``None``: by the model's name.
    """

    mode: ReplayMode = "strict"
    foreign_opaque: Literal["drop", "refuse"] = "drop"
    gemini_dummy_signature: str = "skip_thought_signature_validator"
    signatures_required: bool | None = None
    effort_levels: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Encoded:
    """An encoded wire payload plus every degradation that went into it."""

    payload: JsonObject
    warnings: tuple[TranslationWarning, ...] = field(default=())
