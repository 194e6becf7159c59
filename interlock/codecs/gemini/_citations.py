"""Candidate ``groundingMetadata`` / ``citationMetadata`` ⇄ canonical :class:`Citation` values.

Gemini cites at the candidate, not on a part:

* ``groundingMetadata`` lists sources (``groundingChunks``: ``web`` / ``retrievedContext`` /
  ``maps``, each with ``uri`` and ``title``) and ``groundingSupports``, each a ``segment``
  (``partIndex``, ``startIndex``, ``endIndex``, ``text``) supported by some chunks
  (``groundingChunkIndices``). Every (support, chunk) pair becomes one citation of the text
  part the segment lies in. A chunk no support names cites no text: it is a source the
  search found, kept (like the queries and the search entry point) only in the candidate's
  Gemini fields.
* ``citationMetadata`` (``citationSources`` on the Gemini API, ``citations`` on Vertex AI:
  ``startIndex``, ``endIndex``, ``uri``, ``title``, ``license``) names recited sources; each
  one with a ``uri`` becomes a citation marked ``{"from": "citationMetadata"}``.

Offsets: Gemini counts UTF-8 *bytes* from the start of the part; canonical offsets count
characters (code points) of the part's text. A segment is placed in ``partIndex``'s part
(0 when absent) when its bytes there are its ``text``; otherwise in the concatenated text of
the candidate's text parts (how a stream counts: the chunks' parts are not the answer's),
then, when ``text`` is absent or matches nowhere, where ``partIndex`` says if in range; a
segment that fits nowhere gives citations without offsets, on the first text part. Decoding
keeps both objects verbatim in the candidate's own fields, so a Gemini answer goes back to
Gemini exactly.

Encoding (an answer from another dialect): URL citations become web grounding chunks (one
per distinct URL and title) and one support per distinct span (``partIndex`` and byte offsets
in the wire part, zero values left out as the service does; a citation without offsets is a
chunk no support names); citations marked from ``citationMetadata`` go back there. A stream,
whose chunks are not the answer's parts, counts offsets in the concatenated text and writes
no ``partIndex``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, cast

from interlock.codecs.gemini._wire import DIALECT
from interlock.codecs.gemini._wire import field as wire_field
from interlock.transcript import Citation, JsonObject, JsonValue, Part, TextPart

GROUNDING: Final = "groundingMetadata"
CITATION: Final = "citationMetadata"
_SOURCE_KINDS: Final = ("web", "retrievedContext", "maps", "image")
_FROM_CITATION: Final = "citationMetadata"


def char_offset(text: str, byte_offset: int) -> int:
    """The character offset in ``text`` of a UTF-8 byte offset (a byte inside a character
    counts as that character's start)."""
    return len(text.encode()[:byte_offset].decode("utf-8", "ignore"))


def byte_offset(text: str, char_offset: int) -> int:
    """The UTF-8 byte offset in ``text`` of a character offset."""
    return len(text[:char_offset].encode())


@dataclass(frozen=True, slots=True)
class _Span:
    """Where a segment lies: a part (its position in ``parts``) and character offsets."""

    part: int
    start: int
    end: int


def _int(value: JsonValue, default: int | None) -> int | None:
    return value if type(value) is int else default


def _texts(parts: Sequence[Part]) -> list[tuple[int, str]]:
    return [(index, part.text) for index, part in enumerate(parts) if isinstance(part, TextPart)]


def _within(text: str, start: int, end: int, expected: str | None) -> bool:
    raw = text.encode()
    if not 0 <= start <= end <= len(raw):
        return False
    return expected is None or raw[start:end].decode("utf-8", "replace") == expected


def _in_part(parts: Sequence[Part], index: int, start: int, end: int) -> _Span | None:
    part = parts[index] if 0 <= index < len(parts) else None
    if not isinstance(part, TextPart):
        return None
    text = part.text
    return _Span(index, char_offset(text, start), char_offset(text, end))


def _in_concatenation(
    parts: Sequence[Part], start: int, end: int, expected: str | None
) -> _Span | None:
    base = 0
    for index, text in _texts(parts):
        size = len(text.encode())
        if (
            base <= start
            and end <= base + size
            and _within(text, start - base, end - base, expected)
        ):
            return _in_part(parts, index, start - base, end - base)
        base += size
    return None


def locate(
    parts: Sequence[Part], segment: Mapping[str, JsonValue], part_index: int
) -> _Span | None:
    """The span a segment names in ``parts`` (see the module docstring), or ``None``."""
    start = _int(wire_field(segment, "startIndex"), 0)
    end = _int(wire_field(segment, "endIndex"), None)
    text = wire_field(segment, "text")
    expected = text if isinstance(text, str) else None
    if start is None or end is None:
        return None
    target = parts[part_index] if 0 <= part_index < len(parts) else None
    if isinstance(target, TextPart) and _within(target.text, start, end, expected):
        return _in_part(parts, part_index, start, end)
    found = _in_concatenation(parts, start, end, expected)
    if found is not None or expected is None:
        return found
    if isinstance(target, TextPart) and _within(target.text, start, end, None):
        return _in_part(parts, part_index, start, end)
    return _in_concatenation(parts, start, end, None)


def _source(chunk: JsonValue) -> tuple[str, str | None] | None:
    """The ``(uri, title)`` of a grounding chunk, or ``None`` when it names no URI."""
    if not isinstance(chunk, dict):
        return None
    for kind in _SOURCE_KINDS:
        body = wire_field(chunk, kind)
        if isinstance(body, dict):
            uri = wire_field(body, "uri") or wire_field(body, "sourceUri")
            title = wire_field(body, "title")
            if isinstance(uri, str):
                return uri, title if isinstance(title, str) else None
    return None


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def grounding_citations(
    parts: Sequence[Part], metadata: JsonValue
) -> list[tuple[int | None, Citation]]:
    """``(part position or None, citation)`` for each cited source of a ``groundingMetadata``."""
    if not isinstance(metadata, dict):
        return []
    chunks = _list(wire_field(metadata, "groundingChunks"))
    found: list[tuple[int | None, Citation]] = []
    for support in _list(wire_field(metadata, "groundingSupports")):
        if not isinstance(support, dict):
            continue
        segment = wire_field(support, "segment")
        segment = segment if isinstance(segment, dict) else {}
        part_index = _int(wire_field(segment, "partIndex"), 0) or 0
        span = locate(parts, segment, part_index)
        for chunk_index in _list(wire_field(support, "groundingChunkIndices")):
            if type(chunk_index) is not int or not 0 <= chunk_index < len(chunks):
                continue
            source = _source(chunks[chunk_index])
            if source is not None:
                found.append((None if span is None else span.part, _citation(source, span)))
    return found


def recitation_citations(
    parts: Sequence[Part], metadata: JsonValue
) -> list[tuple[int | None, Citation]]:
    """``(part position or None, citation)`` for each source of a ``citationMetadata``."""
    if not isinstance(metadata, dict):
        return []
    sources = wire_field(metadata, "citationSources") or wire_field(metadata, "citations")
    found: list[tuple[int | None, Citation]] = []
    for source in _list(sources):
        if not isinstance(source, dict):
            continue
        uri, title = wire_field(source, "uri"), wire_field(source, "title")
        if not isinstance(uri, str):
            continue
        span = locate(parts, source, -1)
        marks: JsonObject = {"from": _FROM_CITATION}
        license_name = wire_field(source, "license")
        if isinstance(license_name, str) and license_name:
            marks["license"] = license_name
        citation = _citation((uri, title if isinstance(title, str) else None), span, marks)
        found.append((None if span is None else span.part, citation))
    return found


def _citation(
    source: tuple[str, str | None], span: _Span | None, marks: JsonObject | None = None
) -> Citation:
    uri, title = source
    return Citation(
        url=uri,
        title=title,
        start=None if span is None else span.start,
        end=None if span is None else span.end,
        extra={DIALECT: marks} if marks else {},
    )


def with_citations(parts: Sequence[Part], candidate: Mapping[str, JsonValue]) -> tuple[Part, ...]:
    """``parts`` with the citations of the candidate's grounding and citation metadata
    attached to the text parts they cite (offset-less ones to the first text part)."""
    found = grounding_citations(parts, candidate.get(GROUNDING))
    found += recitation_citations(parts, candidate.get(CITATION))
    if not found:
        return tuple(parts)
    texts = _texts(parts)
    if not texts:
        return tuple(parts)
    attached: dict[int, list[Citation]] = {}
    for position, citation in found:
        attached.setdefault(texts[0][0] if position is None else position, []).append(citation)
    out = list(parts)
    for position, citations in attached.items():
        part = cast(TextPart, out[position])
        out[position] = replace(part, citations=(*part.citations, *citations))
    return tuple(out)


def is_recitation(citation: Citation) -> bool:
    """True for a citation decoded from ``citationMetadata``."""
    return (citation.extra.get(DIALECT) or {}).get("from") == _FROM_CITATION


def encode_citations(
    cited: Sequence[tuple[int | None, str, Sequence[Citation]]], base_offsets: bool
) -> JsonObject:
    """Candidate fields (``groundingMetadata`` / ``citationMetadata``) for cited text parts.

    ``cited`` holds ``(wire part index, text, citations)`` per text part, in order; with
    ``base_offsets`` (a stream) offsets count from the start of the concatenated text and no
    ``partIndex`` is written. Empty when nothing is cited.
    """
    chunks: list[JsonValue] = []
    chunk_of: dict[tuple[str, str | None], int] = {}
    supports: dict[tuple[int, int, int], JsonObject] = {}
    recited: list[JsonValue] = []
    base = 0
    for wire_index, text, citations in cited:
        for citation in citations:
            if citation.url is None:
                continue  # a document citation has no grounding chunk form
            span = _byte_span(text, citation, base if base_offsets else 0)
            if is_recitation(citation):
                recited.append(_recited(citation, span))
                continue
            key = (citation.url, citation.title)
            if key not in chunk_of:
                chunk_of[key] = len(chunks)
                web: JsonObject = {"uri": citation.url}
                if citation.title is not None:
                    web["title"] = citation.title
                chunks.append({"web": web})
            if span is None:
                continue
            part = 0 if base_offsets or wire_index is None else wire_index
            support = supports.get((part, *span))
            if support is None:
                support = supports[(part, *span)] = _support(part, span, text, citation)
            cast(list[JsonValue], support["groundingChunkIndices"]).append(chunk_of[key])
        base += len(text.encode())
    fields: JsonObject = {}
    if chunks:
        grounding: JsonObject = {"groundingChunks": chunks}
        if supports:
            grounding["groundingSupports"] = list(supports.values())
        fields[GROUNDING] = grounding
    if recited:
        fields[CITATION] = {"citationSources": recited}
    return fields


def _byte_span(text: str, citation: Citation, base: int) -> tuple[int, int] | None:
    if citation.start is None or citation.end is None:
        return None
    start = max(0, min(citation.start, len(text)))
    end = max(start, min(citation.end, len(text)))
    return base + byte_offset(text, start), base + byte_offset(text, end)


def _support(part: int, span: tuple[int, int], text: str, citation: Citation) -> JsonObject:
    segment: JsonObject = {}
    if part:
        segment["partIndex"] = part
    if span[0]:
        segment["startIndex"] = span[0]
    segment["endIndex"] = span[1]
    start = max(0, min(citation.start or 0, len(text)))
    segment["text"] = text[start : max(start, min(citation.end or 0, len(text)))]
    return {"segment": segment, "groundingChunkIndices": []}


def _recited(citation: Citation, span: tuple[int, int] | None) -> JsonObject:
    source: JsonObject = {}
    if span is not None:
        if span[0]:
            source["startIndex"] = span[0]
        source["endIndex"] = span[1]
    source["uri"] = citation.url or ""
    if citation.title is not None:
        source["title"] = citation.title
    license_name = (citation.extra.get(DIALECT) or {}).get("license")
    if isinstance(license_name, str):
        source["license"] = license_name
    return source
