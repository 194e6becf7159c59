"""Text-block ``citations`` ⇄ canonical :class:`Citation` values.

With citations on, an Anthropic answer is many ``text`` blocks, each citing its sources for
*the whole block*: a citation is ``Citation(start=0, end=len(text))`` of its block's part.

* ``web_search_result_location`` (``url``, ``title``, ``cited_text``, ``encrypted_index``)
  and ``search_result_location`` (``source``, ``title``, the search result's block range)
  are URL citations (``url`` / ``source``).
* ``char_location``, ``page_location`` and ``content_block_location`` cite a document of the
  request (``document_index``, ``document_title``, a character / page / block range *in the
  document*): ``url`` is ``None`` and ``title`` the document's title. No other dialect has a
  form for them; their encoders drop them with ``citation_dropped``.

Each citation keeps its wire object verbatim in ``extra["anthropic"]["citation"]`` (the
``encrypted_index`` must go back to Anthropic unchanged), so Anthropic gets it back exactly;
a citation from another dialect has no ``encrypted_index`` to give and cannot be sent
(``citation_dropped``). A list holding an entry of a type this codec does not name is also
kept verbatim on the block and re-sent as it came (its known entries still travel).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from interlock.codecs.anthropic._wire import DIALECT
from interlock.transcript import Citation, JsonObject, JsonValue, TextPart

URL_KEYS: Final = {"web_search_result_location": "url", "search_result_location": "source"}
DOCUMENT_TYPES: Final = frozenset({"char_location", "page_location", "content_block_location"})


def _citation(value: JsonValue, text: str) -> Citation | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind in URL_KEYS:
        url = value.get(URL_KEYS[str(kind)])
        title = value.get("title")
        if not isinstance(url, str):
            return None
    elif kind in DOCUMENT_TYPES:
        url, title = None, value.get("document_title")
    else:
        return None
    return Citation(
        url=url,
        title=title if isinstance(title, str) else None,
        start=0,
        end=len(text),
        extra={DIALECT: {"citation": value}},
    )


def decode_citations(fields: JsonObject, text: str) -> tuple[Citation, ...]:
    """The citations of a text block's ``fields["citations"]``, removing the list from
    ``fields`` when the citations alone give it back (an empty list stays: a stream's block
    start carries one)."""
    value = fields.get("citations")
    if not isinstance(value, list) or not value:
        return ()
    found = [_citation(item, text) for item in value]
    citations = tuple(citation for citation in found if citation is not None)
    if len(citations) == len(found):
        del fields["citations"]
    return citations


def _own(citation: Citation) -> JsonObject | None:
    """The wire citation Anthropic issued for ``citation``, when it still describes it."""
    value = (citation.extra.get(DIALECT) or {}).get("citation")
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind in URL_KEYS:
        if value.get(URL_KEYS[str(kind)]) != citation.url:
            return None
    elif kind not in DOCUMENT_TYPES or citation.url is not None:
        return None
    return value


def encode_citations(
    part: TextPart, location: str, warn: Callable[[str, str, str], None]
) -> list[JsonValue]:
    """The block's ``citations`` (Anthropic's own, verbatim); another dialect's are dropped
    with one ``citation_dropped`` warning."""
    out: list[JsonValue] = []
    foreign = 0
    for citation in part.citations:
        own = _own(citation)
        if own is None:
            foreign += 1
        else:
            out.append(own)
    if foreign:
        reason = (
            f"{foreign} citation(s) from another provider: Anthropic cites only its own "
            "search results and documents (encrypted_index, document_index)"
        )
        warn("citation_dropped", location, reason)
    return out
