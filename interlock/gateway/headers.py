"""What the gateway says in response headers: the translation outcome, bounded, and the
upstream headers a client needs (request ids, rate limits, when to retry).

``x-interlock-translation`` is ``exact``, ``translated`` (``; restored N from vault``),
``degraded; <code> at <location>, …`` or ``none`` (the gateway answered without sending
anything upstream: a refusal, an unknown model or path, a model listing). The header is at
most :data:`HEADER_LIMIT` bytes of printable ASCII: past that, the warnings are counted by
code instead of listed (the full list goes to the access log and, for OpenAI-dialect JSON
answers, to the ``interlock`` field of the body). Clients limit header sizes (Node's
``fetch`` fails the whole answer past 16 KB of headers), and the model call would already
have been made and paid for.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from interlock.transcript import JsonValue, TranslationWarning

TRANSLATION_HEADER = "x-interlock-translation"
HEADER_LIMIT = 1024
NOT_SENT = "none"
"""The translation outcome of an answer the gateway gave without calling an upstream."""

PASSED_HEADERS = frozenset({"x-request-id", "request-id", "retry-after", "retry-after-ms"})
PASSED_PREFIXES = ("x-ratelimit-",)
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def translation_label(warnings: tuple[TranslationWarning, ...], restored: int) -> str:
    """The full translation outcome of a translated request (the access log's value)."""
    if warnings:
        what = ", ".join(f"{warning.code} at {warning.location}" for warning in warnings)
        return f"degraded; {what}"
    return f"translated; restored {restored} from vault" if restored else "translated"


def header_value(label: str, warnings: tuple[TranslationWarning, ...] = ()) -> str:
    """``label`` as a header: printable ASCII, at most :data:`HEADER_LIMIT` bytes."""
    value = _printable(label)
    if len(value) <= HEADER_LIMIT:
        return value
    if warnings:
        counts = Counter(warning.code for warning in warnings)
        summary = ", ".join(f"{code}={count}" for code, count in counts.most_common())
        value = _printable(f"degraded; {len(warnings)} warnings by code: {summary}")
        if len(value) <= HEADER_LIMIT:
            return value
    return value[: HEADER_LIMIT - 3] + "..."


def _printable(text: str) -> str:
    if text.isascii() and text.isprintable():
        return text
    return _UNPRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def passed_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The upstream headers a client gets too: request ids, ``retry-after``, rate limits."""
    return {
        name: value
        for name, value in ((name.lower(), value) for name, value in headers)
        if name in PASSED_HEADERS or name.startswith(PASSED_PREFIXES)
    }


def warning_list(warnings: tuple[TranslationWarning, ...]) -> list[JsonValue]:
    """The translation warnings in full, for an answer's ``interlock`` field."""
    return [
        {"code": warning.code, "location": warning.location, "message": warning.message}
        for warning in warnings
    ]
