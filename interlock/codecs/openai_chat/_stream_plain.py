"""The commonest ``chat.completion.chunk``: one text (or arguments) piece for a part already
open, recognised without the general path's decoding (:class:`._stream_decode.StreamDecoder`
uses it first; anything it does not recognise goes the general way, with the same result)."""

from __future__ import annotations

from interlock.codecs.openai_chat._reasoning import RAW_CARRIERS
from interlock.transcript import JsonObject, JsonValue

_DELTA_READS = frozenset(
    {"extra_content", "reasoning_details", *RAW_CARRIERS, "annotations", "refusal", "tool_calls"}
)
"""Every delta key the general path reads besides ``content``."""
_CALL_KEYS = frozenset({"index", "id", "type", "function"})
_TEXT: tuple[str, int | str] = ("text", 0)


def plain_delta(chunk: JsonValue) -> tuple[tuple[str, int | str], str] | None:
    """The slot key and text of the commonest chunk: one choice (index 0, no
    finish_reason) whose delta carries only a non-empty ``content`` string, raw reasoning
    text (one carrier) or one tool call's next non-empty ``arguments`` piece, with no
    usage and no error; ``None`` for
    any other chunk. Such a chunk only appends to a part already open (the caller checks),
    exactly as the general path would: keys that path does not read are ignored alike,
    and one it reads set to anything but ``null`` (or ``""`` content) sends the chunk
    there."""
    if not isinstance(chunk, dict) or "x_groq" in chunk or "mcp_list_tools" in chunk:
        return None
    choices = chunk.get("choices")
    if chunk.get("usage") is not None or chunk.get("error") is not None:
        return None
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or choice.get("finish_reason") is not None:
        return None
    if choice.get("logprobs") is not None:
        return None
    delta, index = choice.get("delta"), choice.get("index", 0)
    # the first choice: the integer 0 (not ``false``, not ``0.0``)
    if type(index) is not int or index != 0 or type(delta) is not dict:
        return None
    if len(delta) == 1 and type(content := delta.get("content")) is str:  # the commonest
        return (_TEXT, content) if content else None
    return _plain_other(delta)


def _plain_other(delta: JsonObject) -> tuple[tuple[str, int | str], str] | None:
    """:func:`plain_delta` of a choice's ``delta`` other than one ``content`` string."""
    content: JsonValue = None
    other: tuple[str, JsonValue] | None = None  # the one other key read, not null
    for key, value in delta.items():
        if key == "content":
            content = value
        elif value is not None and key in _DELTA_READS:
            if other is not None:
                return None
            other = (key, value)
    if other is None:
        return (("text", 0), content) if isinstance(content, str) and content else None
    if content is not None and content != "":
        return None
    key, value = other
    if key == "tool_calls":
        return _plain_call(value)
    if key in RAW_CARRIERS and isinstance(value, str) and value:
        return ("raw", key), value
    return None


def _plain_call(calls: JsonValue) -> tuple[tuple[str, int | str], str] | None:
    """One tool call's next arguments piece (see :func:`plain_delta`)."""
    if not isinstance(calls, list) or len(calls) != 1:
        return None
    call = calls[0]
    if not isinstance(call, dict) or not _CALL_KEYS.issuperset(call):
        return None
    position, function = call.get("index", 0), call.get("function")
    if call.get("type") == "custom" or not isinstance(function, dict):
        return None
    if isinstance(position, bool) or not isinstance(position, int):
        return None
    piece = function.get("arguments")
    return (("call", position), piece) if isinstance(piece, str) and piece else None
