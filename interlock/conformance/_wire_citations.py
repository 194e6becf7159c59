"""Citations counted on the wire, independently of the codecs.

The cross-dialect inventory (:mod:`._features`) lists what a *decoder* produced, so a decoder
that drops a citation would leave nothing to miss. This module counts the citations a
recorded payload holds by reading its JSON directly, with none of the codecs' code; the
corpus runner fails a payload whose decoded citations are fewer.

What counts as one citation, per dialect:

* Responses: an ``output_text`` annotation of type ``url_citation`` (a stream: those of
  its final response object);
* Chat: a ``url_citation`` annotation of a choice-0 message (a stream: of its deltas);
* Gemini: a (grounding support, chunk with a ``uri``) pair, and a ``citationMetadata``
  source with a ``uri`` (a stream: the last grounding metadata, every source);
* Anthropic: an entry of a text block's ``citations`` (a stream: of its block starts and
  ``citations_delta`` events).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from interlock.transcript import JsonValue


def _objects(value: JsonValue) -> Iterator[dict[str, JsonValue]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _get(value: JsonValue, *names: str) -> JsonValue:
    """The first present field of ``names`` (camelCase or snake_case spellings)."""
    if not isinstance(value, dict):
        return None
    for name in names:
        if name in value:
            return value[name]
    return None


def _responses(output: JsonValue) -> int:
    return sum(
        1
        for item in _objects(output)
        for part in _objects(item.get("content"))
        for annotation in _objects(part.get("annotations"))
        if annotation.get("type") == "url_citation"
    )


def _chat(annotations: JsonValue) -> int:
    return sum(1 for a in _objects(annotations) if a.get("type") == "url_citation")


def _candidate(response: JsonValue) -> JsonValue:
    candidates = _get(response, "candidates")
    return next(_objects(candidates), None)


def _grounding(metadata: JsonValue) -> int:
    chunks = _get(metadata, "groundingChunks", "grounding_chunks")
    chunks = chunks if isinstance(chunks, list) else []
    count = 0
    for support in _objects(_get(metadata, "groundingSupports", "grounding_supports")):
        indices = _get(support, "groundingChunkIndices", "grounding_chunk_indices")
        for index in indices if isinstance(indices, list) else []:
            if type(index) is int and 0 <= index < len(chunks) and _uri(chunks[index]):
                count += 1
    return count


def _uri(chunk: JsonValue) -> bool:
    if not isinstance(chunk, dict):
        return False
    return any(isinstance(_get(body, "uri"), str) for body in chunk.values())


def _recited(metadata: JsonValue) -> list[JsonValue]:
    sources = _get(metadata, "citationSources", "citation_sources", "citations")
    return [s for s in _objects(sources) if isinstance(_get(s, "uri"), str)]


def _anthropic_blocks(content: JsonValue) -> int:
    return sum(
        len(block["citations"])  # pyright: ignore[reportArgumentType] -- checked: a list
        for block in _objects(content)
        if block.get("type") == "text" and isinstance(block.get("citations"), list)
    )


def response_citations(dialect: str, body: JsonValue) -> int:
    """The citations of one response body."""
    match dialect:
        case "openai_responses":
            return _responses(_get(body, "output"))
        case "openai_chat":
            choice = next(_objects(_get(body, "choices")), None)
            return _chat(_get(_get(choice, "message"), "annotations"))
        case "gemini":
            candidate = _candidate(body)
            grounding = _grounding(_get(candidate, "groundingMetadata", "grounding_metadata"))
            metadata = _get(candidate, "citationMetadata", "citation_metadata")
            return grounding + len(_recited(metadata))
        case "anthropic":
            return _anthropic_blocks(_get(body, "content"))
        case _:
            return 0


def stream_citations(dialect: str, events: Sequence[JsonValue]) -> int:
    """The citations of a stream (its events' ``data``, parsed)."""
    match dialect:
        case "openai_responses":
            finals = [
                _get(event, "response")
                for event in events
                if _get(event, "type") in ("response.completed", "response.incomplete")
            ]
            return _responses(_get(finals[-1], "output")) if finals else 0
        case "openai_chat":
            return sum(
                _chat(_get(_get(choice, "delta"), "annotations"))
                for event in events
                for choice in _objects(_get(event, "choices"))
            )
        case "gemini":
            return _gemini_stream(events)
        case "anthropic":
            return _anthropic_stream(events)
        case _:
            return 0


def _gemini_stream(events: Sequence[JsonValue]) -> int:
    grounding: JsonValue = None
    recited = 0
    for event in events:
        candidate = _candidate(event)
        found = _get(candidate, "groundingMetadata", "grounding_metadata")
        grounding = found if found is not None else grounding
        recited += len(_recited(_get(candidate, "citationMetadata", "citation_metadata")))
    return _grounding(grounding) + recited


def _anthropic_stream(events: Sequence[JsonValue]) -> int:
    count = 0
    for event in events:
        kind = _get(event, "type")
        if kind == "content_block_start":
            count += _anthropic_blocks([_get(event, "content_block")])
        elif kind == "content_block_delta":
            count += _get(_get(event, "delta"), "type") == "citations_delta"
        elif kind == "message_start":
            count += _anthropic_blocks(_get(_get(event, "message"), "content"))
    return count
