"""``output_text.annotations`` ↔ canonical :class:`Citation` values.

A ``url_citation`` annotation is a citation (``url``, ``title``, ``start_index`` /
``end_index`` as character offsets; other keys kept in the citation's ``extra``), so it
reaches every dialect that can show a URL citation. A list holding other annotations too
(file citations, file paths) is also kept verbatim on the part and re-sent as it came;
only its URL citations travel to other dialects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from interlock.codecs.openai_responses._wire import own, wrap
from interlock.transcript import Citation, JsonObject, JsonValue

_KNOWN = frozenset({"type", "url", "title", "start_index", "end_index"})


def _citation(annotation: JsonValue) -> Citation | None:
    """The citation of one annotation, or ``None`` when it is not a well-formed URL one."""
    if not isinstance(annotation, dict) or annotation.get("type") != "url_citation":
        return None
    url, title = annotation.get("url"), annotation.get("title", None)
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if not isinstance(url, str) or not (title is None or isinstance(title, str)):
        return None
    if not all(value is None or type(value) is int for value in (start, end)):
        return None
    if any(annotation.get(key, 0) is None for key in ("title", "start_index", "end_index")):
        return None  # an explicit null is not regenerated: keep the list verbatim
    extra = {key: value for key, value in annotation.items() if key not in _KNOWN}
    return Citation(
        url=url,
        title=title,
        start=cast("int | None", start),
        end=cast("int | None", end),
        extra=wrap(extra),
    )


def decode_citations(fields: JsonObject) -> tuple[Citation, ...]:
    """The URL citations of ``fields["annotations"]``, removing the list from ``fields``
    when the citations alone give it back."""
    annotations = fields.get("annotations")
    if not isinstance(annotations, list) or not annotations:
        return ()
    citations = [_citation(annotation) for annotation in annotations]
    found = tuple(citation for citation in citations if citation is not None)
    if len(found) == len(citations):
        del fields["annotations"]
    return found


def encode_annotations(citations: Sequence[Citation]) -> list[JsonValue]:
    """``url_citation`` annotations for ``citations``."""
    out: list[JsonValue] = []
    for citation in citations:
        if citation.url is None:
            continue  # a document citation: warned by the request encoder (_replay)
        annotation: JsonObject = {"type": "url_citation"}
        if citation.start is not None:
            annotation["start_index"] = citation.start
        if citation.end is not None:
            annotation["end_index"] = citation.end
        if citation.title is not None:
            annotation["title"] = citation.title
        annotation["url"] = citation.url
        out.append({**annotation, **own(citation.extra)})
    return out
