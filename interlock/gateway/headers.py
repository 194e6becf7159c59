"""What the gateway says in response headers: the translation outcome, bounded, and the
upstream headers a client needs (request ids, rate limits, when to retry).

``x-interlock-translation`` is ``exact``, ``translated`` (``; restored N from vault``),
``degraded; <code> at <location>, …`` or ``none`` (the gateway answered without sending
anything upstream: a refusal, an unknown model or path, a model listing). The header is at
most :data:`HEADER_LIMIT` bytes of printable ASCII: past that, the warnings are counted by
code instead of listed (the listed form goes to the access log and into the answer's
``interlock`` member). Clients limit header sizes (Node's ``fetch`` fails the whole answer
past 16 KB of headers), and the model call would already have been made and paid for.

Everywhere a call's warnings are said (label, header, answer), they are first *folded*
(:func:`folded`): the first :data:`WARNINGS_KEPT` of each code in full, then one summary of
that code saying how many more there were. An agent resends its whole history every turn,
and a warning per history item (``vault_miss``) would otherwise be repeated for every
earlier item in every answer, so each turn's answer would cost more than the last.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from interlock.transcript import JsonValue, TranslationWarning

TRANSLATION_HEADER = "x-interlock-translation"
HEADER_LIMIT = 1024
NOT_SENT = "none"
"""The translation outcome of an answer the gateway gave without calling an upstream."""

PASSED_HEADERS = frozenset({"x-request-id", "request-id", "retry-after", "retry-after-ms"})
PASSED_PREFIXES = ("x-ratelimit-",)
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")
WARNINGS_KEPT = 8
"""How many warnings of each code an answer (and its label) lists in full."""


@dataclass(frozen=True, slots=True)
class Said:
    """One warning as an answer says it: in full (``omitted`` 0), or the summary that stands
    for the ``omitted`` (> 0) warnings of its code past the first :data:`WARNINGS_KEPT`
    (``warning.location`` is the first of those)."""

    warning: TranslationWarning
    omitted: int = 0


def folded(warnings: tuple[TranslationWarning, ...]) -> list[Said]:
    """``warnings`` in order, the first :data:`WARNINGS_KEPT` of each code in full; where the
    next one of a code stood, one summary of all that code's remaining ones. At most
    ``WARNINGS_KEPT + 1`` entries per code, whatever the number of warnings.

    The codes are counted first (one C pass); the warnings are then walked only until every
    code has its summary or its last warning (an agent's hundreds of ``vault_miss`` warnings:
    nine steps)."""
    if len(warnings) <= WARNINGS_KEPT:
        return [Said(warning) for warning in warnings]
    counts = code_counts(warnings)
    unfinished = len(counts)
    seen: dict[str, int] = {}
    said: list[Said] = []
    for warning in warnings:
        code = warning.code
        times = seen.get(code, 0) + 1
        seen[code] = times
        if times <= WARNINGS_KEPT:
            said.append(Said(warning))
        elif times == WARNINGS_KEPT + 1:
            omitted = counts[code] - WARNINGS_KEPT
            message = f"... and {omitted} more like this"
            summary = TranslationWarning(code=code, location=warning.location, message=message)
            said.append(Said(summary, omitted))
        if times == min(counts[code], WARNINGS_KEPT + 1):  # said all this code says
            unfinished -= 1
            if not unfinished:
                break
    return said


def code_counts(warnings: tuple[TranslationWarning, ...]) -> dict[str, int]:
    """How many warnings of each code, in order of first appearance. (The codes listed,
    then counted by ``list.count``: a few codes among hundreds of warnings cost a few C
    passes, several times less than a ``Counter``.)"""
    codes = [warning.code for warning in warnings]
    return {code: codes.count(code) for code in dict.fromkeys(codes)}


def translation_label(warnings: tuple[TranslationWarning, ...], restored: int) -> str:
    """The translation outcome of a translated request (the access log's value), its
    warnings :func:`folded`: ``<code> at <location>`` each, ``<N> more <code>`` a summary."""
    if warnings:
        what = ", ".join(
            f"{entry.omitted} more {entry.warning.code}"
            if entry.omitted
            else f"{entry.warning.code} at {entry.warning.location}"
            for entry in folded(warnings)
        )
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
    """The translation warnings :func:`folded`, for an answer's ``interlock`` field:
    ``{"code", "location", "message"}`` each, and a summary also ``"omitted": N``."""
    listed: list[JsonValue] = []
    for entry in folded(warnings):
        warning = entry.warning
        item: dict[str, JsonValue] = {
            "code": warning.code,
            "location": warning.location,
            "message": warning.message,
        }
        if entry.omitted:
            item["omitted"] = entry.omitted
        listed.append(item)
    return listed
