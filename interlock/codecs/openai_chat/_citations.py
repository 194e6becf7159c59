"""``message.annotations`` (and their stream deltas) ↔ canonical :class:`Citation` values.

Chat puts a response's ``url_citation`` annotations on the message, with offsets into its
``content`` string: they become the citations of the message's text part when it has
exactly one (otherwise the offsets would name no part, and the list stays kept verbatim
on the message). Only responses carry annotations: a request never sends them (_fields).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

from interlock.codecs.openai_chat._wire import DIALECT, LAYOUT, extra_of
from interlock.transcript import Citation, JsonObject, JsonValue, Message, TextPart

_INNER = frozenset({"url", "title", "start_index", "end_index"})


def _citation(annotation: JsonValue) -> Citation | None:
    if not isinstance(annotation, dict) or annotation.get("type") != "url_citation":
        return None
    if set(annotation) != {"type", "url_citation"}:
        return None
    inner = annotation["url_citation"]
    if not isinstance(inner, dict) or not isinstance(inner.get("url"), str):
        return None
    title = inner.get("title", "")
    start, end = inner.get("start_index", 0), inner.get("end_index", 0)
    if not isinstance(title, str) or type(start) is not int or type(end) is not int:
        return None
    extra = {key: value for key, value in inner.items() if key not in _INNER}
    return Citation(
        url=cast(str, inner["url"]),
        title=cast("str | None", inner.get("title")),
        start=cast("int | None", inner.get("start_index")),
        end=cast("int | None", inner.get("end_index")),
        extra={DIALECT: extra} if extra else {},
    )


def citations_of(annotations: JsonValue) -> tuple[Citation, ...] | None:
    """The citations of a whole annotation list, or ``None`` unless every entry is one."""
    if not isinstance(annotations, list) or not annotations:
        return None
    found = [_citation(annotation) for annotation in annotations]
    if any(citation is None for citation in found):
        return None
    return tuple(citation for citation in found if citation is not None)


def with_citations(message: Message) -> Message:
    """A decoded response message whose URL annotations moved onto its one text part."""
    kept = message.extra.get(DIALECT) or {}
    citations = citations_of(kept.get("annotations"))
    texts = [index for index, part in enumerate(message.parts) if isinstance(part, TextPart)]
    if citations is None or len(texts) != 1:
        return message
    parts = list(message.parts)
    parts[texts[0]] = replace(cast(TextPart, parts[texts[0]]), citations=citations)
    rest = {key: value for key, value in kept.items() if key != "annotations"}
    extra = {name: value for name, value in message.extra.items() if name != DIALECT}
    if rest:
        extra[DIALECT] = rest
    return replace(message, parts=tuple(parts), extra=extra)


def encode_annotations(citations: Sequence[Citation]) -> list[JsonValue]:
    """Chat ``url_citation`` annotations for ``citations``."""
    out: list[JsonValue] = []
    for citation in citations:
        if citation.url is None:
            continue  # a document citation has no url_citation form
        inner: JsonObject = {}
        if citation.end is not None:
            inner["end_index"] = citation.end
        if citation.start is not None:
            inner["start_index"] = citation.start
        if citation.title is not None:
            inner["title"] = citation.title
        inner["url"] = citation.url
        inner.update(citation.extra.get(DIALECT) or {})
        out.append({"type": "url_citation", "url_citation": inner})
    return out


def shift_citations(
    citations: Sequence[Citation], offset: int, length: int
) -> tuple[Citation, ...]:
    """``citations`` of a text part of ``length`` characters that starts ``offset``
    characters into a Chat ``content`` string, with offsets into that string. A citation
    without offsets (the whole part: Anthropic's) keeps none at offset 0 and gets the part's
    span further on, where no offsets would read as citing from the start."""
    if offset == 0:
        return tuple(citations)
    return tuple(
        replace(
            citation,
            start=offset + (citation.start or 0),
            end=offset + length if citation.end is None else offset + citation.end,
        )
        for citation in citations
    )


def message_citations(message: Message) -> tuple[Citation, ...]:
    """The citations a response message can show, with offsets into its one ``content``
    string: a response's text parts are joined (:func:`shift_citations`). Signature
    carriers write no text."""
    found: list[Citation] = []
    offset = 0
    for part in message.parts:
        if isinstance(part, TextPart) and not extra_of(part.extra, LAYOUT).get("carrier"):
            found += shift_citations(part.citations, offset, len(part.text))
            offset += len(part.text)
    return tuple(found)
