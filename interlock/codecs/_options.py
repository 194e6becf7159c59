"""The shared generation options a dialect has no field for, and the warning each one gets.

Every encoder writes the :class:`~interlock.transcript.GenerationOptions` its dialect can
carry and calls :func:`unsent_options` for the rest, so an option set by the client never
disappears without an ``option_dropped`` warning naming it.
"""

from __future__ import annotations

from typing import Final

from interlock.transcript import GenerationOptions, TranslationWarning

SHARED: Final = (
    "top_k",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "metadata",
)
"""Options only some dialects carry (the ones every dialect has are encoded directly)."""


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
