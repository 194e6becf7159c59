"""The commonest canonical messages as input items, directly (the fast path of ``_replay``).

:func:`plain_items` takes a message whose parts all render to their default shapes and
need no replay decision beyond dropping reasoning that has neither an item id nor an
opaque payload: a user, system or developer message of text parts without extras or
signatures; a tool message of results without extras whose outputs are such text parts;
an assistant message of text parts and local calls without extras, signatures, item ids
or citations, and reasoning parts without item id or opaque payload (never replayable:
dropped with the general path's warnings, or refused under strict). It gives exactly the
items and warnings :func:`_replay.encode_message` gives, or ``None`` for any other
message, which that function then encodes.
"""

from __future__ import annotations

from interlock.codecs.openai_responses._replay import ReplayContext, warn_dropped
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    OutputPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


def plain_items(message: Message, index: int, context: ReplayContext) -> list[JsonObject] | None:
    """Message ``index`` as input items when it is of a plain shape (module docstring)."""
    role = message.role
    if role == "assistant":
        return _step(message, index, context)
    if role == "tool":
        return _results(message)
    if message.extra:
        return None
    content: list[JsonValue] = []
    for part in message.parts:
        if type(part) is not TextPart or part.extra or part.signature is not None:
            return None
        content.append({"type": "input_text", "text": part.text})
    return [{"role": role, "content": content, "type": "message"}]


def _results(message: Message) -> list[JsonObject] | None:
    items: list[JsonObject] = []
    for part in message.parts:
        if type(part) is not ToolResultPart or part.extra:
            return None
        output = _text(part.output)
        if output is None:
            return None
        item: JsonObject = {"type": "function_call_output"}
        if part.item_id is not None:
            item["id"] = part.item_id
        item["call_id"] = part.call_id
        item["output"] = output
        items.append(item)
    return items


def _text(output: tuple[OutputPart, ...]) -> str | None:
    """Text outputs without extras as the one string they encode to (``None`` otherwise)."""
    texts: list[str] = []
    for part in output:
        if type(part) is not TextPart or part.extra:
            return None
        texts.append(part.text)
    return "".join(texts)


def _step(message: Message, index: int, context: ReplayContext) -> list[JsonObject] | None:
    items: list[JsonObject] = []
    reasoning: list[int] = []
    bound = False
    for position, part in enumerate(message.parts):
        if type(part) is TextPart:
            if part.extra or part.signature is not None or part.item_id is not None:
                return None
            if part.citations or part.logprobs:
                return None
            items.append({"role": "assistant", "content": part.text, "type": "message"})
        elif type(part) is ToolCallPart:
            if part.extra or part.signature is not None or part.item_id is not None:
                return None
            call: JsonObject = {"type": "function_call", "call_id": part.call_id}
            call |= {"name": part.name, "arguments": part.arguments}
            items.append(call)
            bound = True
        elif type(part) is ReasoningPart:
            if part.opaque is not None or part.item_id is not None:
                return None
            reasoning.append(position)
        else:
            return None
    if reasoning:
        warn_dropped(reasoning, reasoning[0], bound, "", index, context)
    return items
