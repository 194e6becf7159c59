"""The opaque payload formats, one constant each: the only place their strings are written.

An :class:`~interlock.transcript.Opaque` names its issuer (``provider``) and exactly what its
``data`` is (``format``). Codecs replay a payload only to its issuer; every other codec
treats it as foreign (dropped with a warning, or refused). Conformance reads the same names.
"""

from __future__ import annotations

from typing import Final

OPENAI_ENCRYPTED_CONTENT: Final = "openai.responses.encrypted_content"
"""Responses ``reasoning.encrypted_content``. Its provider is the vendor of the Responses
service that issued it (``openai``, ``xai``…): each service accepts only its own."""

UNKNOWN_ISSUER: Final = "unknown"
"""The provider of a payload whose issuer nobody recorded: Responses encrypted reasoning a
client sent back in its history (the wire does not say which service issued it). An
encoder of the payload's format replays it to its own service, which judges it; the
gateway labels a blob it saw another vendor issue with that vendor instead."""

GEMINI_THOUGHT_SIGNATURE: Final = "gemini.thought_signature"
"""A Gemini ``thoughtSignature`` (provider ``google``), also via the OpenAI-compatible endpoint."""

OPENROUTER_REASONING_DETAIL: Final = "openrouter.reasoning_detail"
"""One OpenRouter ``reasoning_details`` entry (provider ``openrouter``)."""

ANTHROPIC_THINKING_SIGNATURE: Final = "anthropic.thinking_signature"
"""The ``signature`` of an Anthropic ``thinking`` block (provider ``anthropic``)."""

ANTHROPIC_REDACTED_THINKING: Final = "anthropic.redacted_thinking"
"""The ``data`` of an Anthropic ``redacted_thinking`` block (provider ``anthropic``)."""

OPAQUE_FORMATS: Final = frozenset(
    {
        OPENAI_ENCRYPTED_CONTENT,
        GEMINI_THOUGHT_SIGNATURE,
        OPENROUTER_REASONING_DETAIL,
        ANTHROPIC_THINKING_SIGNATURE,
        ANTHROPIC_REDACTED_THINKING,
    }
)
"""Every format a codec of this tree issues."""
