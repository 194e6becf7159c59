"""Media another service cannot use: Google-only references, and kinds a target has no input for.

A Gemini ``fileData.fileUri`` may name a Google Cloud Storage object (``gs://…``) or a file
uploaded to the Gemini Files API (``https://generativelanguage.googleapis.com/…/files/…``):
only Gemini can fetch either. Sent to another provider it fails there (or is fetched as an
unauthenticated URL), so every other encoder treats such a part as a loss of the replay
policy: refused under strict, dropped with a ``media_unreachable`` warning under degrade.

A file uploaded to OpenAI and referenced by its id (Chat ``file.file_id``, Responses
``input_file`` / ``input_image`` ``file_id``) is canonically the URI ``openai-file:<id>``
(:func:`openai_file_uri`): both OpenAI dialects read and write it, so it translates between
them; Gemini and Anthropic cannot read OpenAI's files, so their encoders treat it as they treat
a Google-only reference (:func:`unreachable_reason`).
"""

from __future__ import annotations

from typing import Final

from interlock.transcript import MediaPart

GOOGLE_ONLY_PREFIXES: Final = ("gs://", "https://generativelanguage.googleapis.com/")
"""URI prefixes only Gemini (and Vertex, for ``gs://``) can fetch."""

UNREACHABLE = "media_unreachable"
"""The warning / refusal code for such a part."""

OPENAI_FILE_SCHEME: Final = "openai-file:"
"""The URI scheme of a file uploaded to OpenAI, referenced by its id."""


def openai_file_uri(file_id: str) -> str:
    """The canonical URI of the OpenAI file ``file_id``."""
    return OPENAI_FILE_SCHEME + file_id


def openai_file_id(part: MediaPart) -> str | None:
    """The OpenAI file id ``part`` references, or ``None``."""
    uri = part.uri
    if uri is None or not uri.startswith(OPENAI_FILE_SCHEME):
        return None
    return uri.removeprefix(OPENAI_FILE_SCHEME)


def unreachable_reason(part: MediaPart, target: str) -> str | None:
    """Why ``target`` (neither OpenAI dialect) cannot use ``part``: a Google-only reference
    (:func:`google_only_reason`) or an OpenAI file; ``None`` when it can."""
    file_id = openai_file_id(part)
    if file_id is not None:
        return f"{file_id} is a file uploaded to OpenAI: only OpenAI can read it, {target} cannot"
    return google_only_reason(part, target)


def google_only_reason(part: MediaPart, target: str) -> str | None:
    """Why ``target`` cannot use ``part`` (a Google-only reference), or ``None``."""
    uri = part.uri
    if uri is None or not uri.startswith(GOOGLE_ONLY_PREFIXES):
        return None
    where = (
        "a Google Cloud Storage object" if uri.startswith("gs://") else "a Gemini Files API file"
    )
    return f"{uri} is {where}: only Gemini can fetch it, {target} cannot"
