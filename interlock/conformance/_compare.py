"""Classifying what a translation did to each item: kept, degraded, refused, or lost.

The rule the suite enforces: an item of the source is either found again after the round
trip through the target (``translated``), or missing with a warning whose location covers it
(``degraded``), or the encoder refused the history (``refused``). Anything else is a failure:
``lost`` (missing without a warning), ``leaked`` (an opaque payload sent to a provider that
did not issue it) or ``fabricated`` (an opaque payload the source never had, without a warning).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from interlock.conformance._codecs import GEMINI_SIGNATURE, OPENAI_ENCRYPTED, Target
from interlock.conformance._features import Item
from interlock.transcript import TranslationWarning

Outcome: TypeAlias = Literal["exact", "translated", "degraded", "refused"]
Failure: TypeAlias = Literal["lost", "leaked", "fabricated"]

SIGNATURE_FORMATS = frozenset({GEMINI_SIGNATURE, OPENAI_ENCRYPTED})

OUTCOME_ORDER: tuple[Outcome, ...] = ("exact", "translated", "degraded", "refused")


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What happened to one item; ``failure`` is set when the suite must fail."""

    item: Item
    outcome: Outcome | None
    failure: Failure | None = None
    detail: str = ""
    code: str = ""
    """Why the item is ``degraded`` (the warning's code) or ``refused`` (the refusal's)."""


def covers(warning_location: str, location: str) -> bool:
    """True when a warning at ``warning_location`` names ``location`` or an enclosing path."""
    if not warning_location:
        return False
    return location == warning_location or location.startswith(
        (f"{warning_location}.", f"{warning_location}[")
    )


def _warning_for(
    location: str, warnings: Sequence[TranslationWarning]
) -> TranslationWarning | None:
    return next((warning for warning in warnings if covers(warning.location, location)), None)


def compare_items(
    source: Sequence[Item],
    translated: Sequence[Item],
    warnings: Sequence[TranslationWarning],
    target: Target,
) -> list[ItemResult]:
    """Classify every source item against the items found after the round trip."""
    available = Counter(item.key for item in translated)
    results: list[ItemResult] = []
    for item in source:
        if available[item.key] > 0:
            available[item.key] -= 1
            results.append(_found(item, target))
            continue
        warning = _warning_for(item.location, warnings)
        if warning is not None:
            results.append(
                ItemResult(
                    item,
                    "degraded",
                    detail=f"{warning.code}: {warning.message}",
                    code=warning.code,
                )
            )
        else:
            results.append(
                ItemResult(item, None, "lost", "missing after the round trip, no warning")
            )
    results.extend(_fabricated(translated, available, warnings))
    return results


def _found(item: Item, target: Target) -> ItemResult:
    if item.opaque is not None and not target.carries_opaque(item.opaque):
        detail = f"{item.opaque.provider} {item.opaque.format} sent to {target.name}"
        return ItemResult(item, None, "leaked", detail)
    return ItemResult(item, "translated")


def _fabricated(
    translated: Iterable[Item],
    left: Counter[tuple[str, ...]],
    warnings: Sequence[TranslationWarning],
) -> Iterator[ItemResult]:
    """Signatures the source did not have (a degrade-mode dummy signature).

    Only signature formats count: a codec may legitimately re-express readable reasoning in a
    structured carrier (an OpenRouter ``reasoning.summary`` detail holding the same text).

    Their locations are in the *translated* history, whose indexes may differ from the
    source's, so any warning of the translation accounts for them; none at all is a failure.
    """
    for item in translated:
        if (
            item.opaque is None
            or item.opaque.format not in SIGNATURE_FORMATS
            or left[item.key] <= 0
        ):
            continue
        left[item.key] -= 1
        if not warnings:
            yield ItemResult(item, None, "fabricated", "an opaque payload the source did not have")


def joined_texts(items: Sequence[Item]) -> list[Item]:
    """``items`` with the message's text items joined into one at the first one's location
    (what a stream with one text channel delivers: every text, in order, as one text)."""
    texts = [item for item in items if item.feature == "text" and item.key[0] == "text"]
    if len(texts) < 2:
        return list(items)
    first = texts[0]
    joined = Item("text", first.location, (*first.key[:2], "".join(t.key[2] for t in texts)))
    out: list[Item] = []
    for item in items:
        if item is first:
            out.append(joined)
        elif not any(item is text for text in texts):
            out.append(item)
    return out


def refused_items(
    source: Sequence[Item], location: str, reason: str, code: str = ""
) -> list[ItemResult]:
    """Items at (or under) a refusal's location; the refusal is their outcome."""
    return [
        ItemResult(item, "refused", detail=f"{location}: {reason}", code=code)
        for item in source
        if covers(location, item.location) or item.location == location
    ]


def worst(outcomes: Iterable[Outcome]) -> Outcome | None:
    """The least faithful outcome of several (``refused`` > ``degraded`` > … > ``exact``)."""
    ranked = [OUTCOME_ORDER.index(outcome) for outcome in outcomes]
    return OUTCOME_ORDER[max(ranked)] if ranked else None
