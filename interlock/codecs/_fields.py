"""Wire fields a decoder kept verbatim, and the warning every other dialect owes for them.

Each provider decoder keeps the request fields the canonical model does not name in
``Request.extra[<its dialect>]`` so a same-dialect round trip is exact. Another dialect's
encoder cannot send them; it must say so. :func:`foreign_field_warnings` gives the
``field_dropped`` warning for each one (its location names the dialect and the field), so no
setting vanishes without a word. Transport fields (``stream``, ``stream_options``) are the
gateway's business and not settings; codec-private marks (``~…``, Gemini's layout marks)
are not wire fields.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from interlock.transcript import JsonObject, JsonValue, TranslationWarning

TRANSPORT = frozenset({"stream", "stream_options", "alt"})
"""Request fields about the transport, not the model's behaviour."""

_WALKED: dict[str, tuple[str, ...] | None] = {
    "openai-chat": None,
    "openai-responses": None,
    "gemini": ("fields", "generationConfig", "thinkingConfig"),
    "anthropic": ("fields",),
}
"""Per dialect key: ``None`` when every entry is a wire field, else the entries holding them."""

_NESTED = frozenset({"text", "generationConfig", "thinkingConfig"})
_ENCRYPTED_INCLUDE = "reasoning.encrypted_content"


def walks(dialect: str) -> bool:
    """Whether :func:`kept_wire_fields` knows where ``dialect``'s decoder keeps wire fields."""
    return dialect in _WALKED


def kept_wire_fields(
    extra: Mapping[str, JsonObject], dialect: str
) -> Iterator[tuple[str, JsonValue]]:
    """``(path, value)`` of each wire field ``dialect``'s decoder kept in ``extra``."""
    kept = extra.get(dialect)
    if not kept or dialect not in _WALKED:
        return
    containers = _WALKED[dialect]
    if containers is None:
        yield from _fields(kept, "")
        return
    for name in containers:
        value = kept.get(name)
        if isinstance(value, dict):
            yield from _fields(value, "" if name == "fields" else f"{name}.")


def _fields(kept: Mapping[str, JsonValue], prefix: str) -> Iterator[tuple[str, JsonValue]]:
    for key, value in kept.items():
        if key in TRANSPORT or key.startswith("~") or value in (None, {}, []):
            continue
        if key == "include" and isinstance(value, list):
            value = [item for item in value if item != _ENCRYPTED_INCLUDE]  # canonical already
            if not value:
                continue
        if key in _NESTED and isinstance(value, dict):
            yield from _fields(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def effort_for_budget(budget: int) -> str | None:
    """The OpenAI reasoning effort closest to a Gemini ``thinkingBudget`` (tokens); ``None``
    for ``-1`` (dynamic: the model decides), which no effort names."""
    if budget < 0:
        return None
    if budget == 0:
        return "minimal"
    if budget <= 2048:
        return "low"
    return "medium" if budget <= 12288 else "high"


def foreign_field_warnings(extra: Mapping[str, JsonObject], own: str) -> list[TranslationWarning]:
    """One ``field_dropped`` warning per wire field another dialect's decoder kept."""
    warnings: list[TranslationWarning] = []
    for dialect in _WALKED:
        if dialect == own:
            continue
        for path, _ in kept_wire_fields(extra, dialect):
            warnings.append(
                TranslationWarning(
                    code="field_dropped",
                    location=f"{dialect}.{path}",
                    message=f"{dialect} field {path!r} has no {own} equivalent; not sent",
                )
            )
    return warnings
