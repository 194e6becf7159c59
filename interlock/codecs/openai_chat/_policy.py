"""Replay-policy bookkeeping while one request is encoded."""

from __future__ import annotations

from dataclasses import dataclass, field

from interlock.transcript import LossyHistoryError, ReplayPolicy, TranslationWarning


@dataclass(slots=True)
class Degradations:
    """Collects the warnings of one encode and applies the replay policy.

    Every drop goes through :meth:`drop` or :meth:`lossy`, so nothing is dropped without
    a warning and a strict policy raises before any payload exists.
    """

    policy: ReplayPolicy
    warnings: list[TranslationWarning] = field(default_factory=list[TranslationWarning])

    def drop(self, code: str, location: str, message: str) -> None:
        """Record a deliberate, always-allowed degradation."""
        self.warnings.append(TranslationWarning(code=code, location=location, message=message))

    def lossy(self, code: str, location: str, message: str) -> None:
        """Loss the target cannot avoid: strict mode raises, degrade mode warns."""
        if self.policy.mode == "strict":
            raise LossyHistoryError(location, message, code=code)
        self.drop(code, location, message)

    def foreign(self, location: str, provider: str, what: str) -> None:
        """An opaque payload issued by ``provider`` that this target must not receive."""
        message = f"{what} issued by {provider!r} is never sent to an OpenAI Chat upstream"
        if self.policy.foreign_opaque == "refuse":
            raise LossyHistoryError(location, message, code="opaque_refused")
        self.drop("opaque_dropped", location, message)
