"""Media another service cannot use: Google-only references, and kinds a target has no input for.

A Gemini ``fileData.fileUri`` may name a Google Cloud Storage object (``gs://…``) or a file
uploaded to the Gemini Files API (``https://generativelanguage.googleapis.com/…/files/…``):
only Gemini can fetch either. Sent to another provider it fails there (or is fetched as an
unauthenticated URL), so every other encoder treats such a part as a loss of the replay
policy: refused under strict, dropped with a ``media_unreachable`` warning under degrade.
"""

from __future__ import annotations

from typing import Final

from interlock.transcript import MediaPart

GOOGLE_ONLY_PREFIXES: Final = ("gs://", "https://generativelanguage.googleapis.com/")
"""URI prefixes only Gemini (and Vertex, for ``gs://``) can fetch."""

UNREACHABLE = "media_unreachable"
"""The warning / refusal code for such a part."""


def google_only_reason(part: MediaPart, target: str) -> str | None:
    """Why ``target`` cannot use ``part`` (a Google-only reference), or ``None``."""
    uri = part.uri
    if uri is None or not uri.startswith(GOOGLE_ONLY_PREFIXES):
        return None
    where = (
        "a Google Cloud Storage object" if uri.startswith("gs://") else "a Gemini Files API file"
    )
    return f"{uri} is {where}: only Gemini can fetch it, {target} cannot"
