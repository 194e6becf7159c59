"""Mistral's ``thinking`` content part (Magistral reasoning) both ways.

Mistral's Chat Completions API returns reasoning inside ``message.content`` (and, streamed,
inside ``delta.content``) as a content part ``{"type": "thinking", "thinking": [chunk, …],
"closed": bool}`` whose chunks are ``{"type": "text", "text": …}`` (or references). It decodes
to a raw :class:`ReasoningPart` whose text is the chunks' texts joined, marked with the layout
carrier ``"thinking"``; the chunk boundaries (or, when a chunk is not plain text, the chunk
list itself) are kept so that a same-dialect round trip gives the part back exactly.

Invariant: such a part goes back into ``content`` only when the encoder preserves where
reasoning came from (reasoning dialect ``None``); any chosen dialect treats it as raw
reasoning like every other.
"""

from __future__ import annotations

from interlock.codecs.openai_chat._wire import (
    LAYOUT,
    ReasoningDialect,
    as_list,
    as_object,
    as_str,
    extra_of,
    merge_unknown,
    required,
    rest,
    with_extra,
)
from interlock.transcript import JsonObject, JsonValue, Part, ReasoningPart

CARRIER = "thinking"
"""The layout carrier of reasoning decoded from a ``thinking`` content part."""


def chunks_text(chunks: list[JsonValue], path: str) -> tuple[str, bool]:
    """The chunks' texts joined, and whether every chunk is a plain ``{type, text}`` one."""
    pieces: list[str] = []
    plain = True
    for i, value in enumerate(chunks):
        chunk = as_object(value, f"{path}[{i}]")
        if chunk.get("type") == "text" and "text" in chunk:
            pieces.append(as_str(chunk["text"], f"{path}[{i}].text"))
            plain = plain and set(chunk) == {"type", "text"}
        else:
            plain = False
    return "".join(pieces), plain


def decode_thinking(item: JsonObject, path: str) -> ReasoningPart:
    """A ``thinking`` content part as raw reasoning (``path`` names the part)."""
    where = f"{path}.thinking"
    chunks = as_list(required(item, "thinking", path), where)
    text, plain = chunks_text(chunks, where)
    layout: JsonObject = {"carrier": CARRIER}
    if not plain:
        layout["chunks"] = chunks
    elif len(chunks) != 1:
        layout["splits"] = [len(as_str(as_object(c, where).get("text"), where)) for c in chunks]
    unknown = rest(item, {"type", "thinking"})
    return ReasoningPart(reasoning_kind="raw", text=text, extra=with_extra(unknown, layout))


def in_content(part: Part, dialect: ReasoningDialect | None) -> bool:
    """True when ``part`` goes back into ``content`` as a ``thinking`` part."""
    if dialect is not None or not isinstance(part, ReasoningPart):
        return False
    return extra_of(part.extra, LAYOUT).get("carrier") == CARRIER


def encode_thinking(part: ReasoningPart) -> JsonObject:
    """The ``thinking`` content part of a part decoded from one (its chunks as they came)."""
    layout = extra_of(part.extra, LAYOUT)
    return merge_unknown({"type": "thinking", "thinking": _chunks(part.text, layout)}, part.extra)


def _chunks(text: str, layout: JsonObject) -> list[JsonValue]:
    kept = layout.get("chunks")
    if isinstance(kept, list) and chunks_text(kept, "thinking")[0] == text:
        return kept
    splits = layout.get("splits")
    if isinstance(splits, list) and sum(s for s in splits if isinstance(s, int)) == len(text):
        out: list[JsonValue] = []
        start = 0
        for size in splits:
            end = start + (size if isinstance(size, int) else 0)
            out.append({"type": "text", "text": text[start:end]})
            start = end
        return out
    return [{"type": "text", "text": text}]


def delta_piece(text: str) -> JsonObject:
    """A streamed ``delta`` carrying ``text`` as a piece of a ``thinking`` part."""
    return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}
