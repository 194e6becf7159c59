"""The commonest answers, encoded directly (the fast path of ``encode_response``).

:func:`plain_answer` writes a ``chat.completion`` body for a response of one exact shape and
gives what the general path (``_response.encode_response``, through the message encoder)
writes for it, or ``None`` for anything else (which that path then encodes). The shape:
no alternatives and no Chat fields kept on the response (``extra`` holds no entry of this
codec's: another dialect's kept fields are never written here); one assistant message with
no name and no ``extra``, of parts each with no ``extra``:

* text parts with no signature, citations or log-probabilities;
* reasoning parts that are not raw text (summaries and encrypted reasoning: the client's
  dialect shows none of them, the general path writes nothing for them) and carry no
  OpenRouter detail;
* tool calls with no signature;

and a usage with no per-model breakdown (or none). For a reasoning dialect of ``None`` or
``reasoning_content`` (the gateway's Chat clients): others may write more.
"""

from __future__ import annotations

from interlock.codecs.openai_chat._fields import FieldPolicy
from interlock.codecs.openai_chat._finish import encode_finish_reason
from interlock.codecs.openai_chat._reasoning import own_detail
from interlock.codecs.openai_chat._usage import encode_usage
from interlock.codecs.openai_chat._wire import DIALECT, LAYOUT, ReasoningDialect
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    Response,
    TextPart,
    ToolCallPart,
)

_DIALECTS = (None, "reasoning_content")
"""Reasoning dialects whose answers this module writes (module docstring)."""


def plain_answer(
    response: Response, reasoning_dialect: ReasoningDialect | None
) -> JsonObject | None:
    """``response`` as ``encode_response(response, reasoning_dialect=…)`` writes it, when it
    has the module's shape; else ``None``."""
    if reasoning_dialect not in _DIALECTS or response.alternatives:
        return None
    if DIALECT in response.extra or LAYOUT in response.extra:
        return None
    usage = response.usage
    if usage is not None and usage.breakdown:
        return None
    wire = _plain_message(response.message)
    if wire is None:
        return None
    finish = encode_finish_reason(response.finish_reason, response.native_finish_reason)
    choice: JsonObject = {"index": 0, "message": wire, "finish_reason": finish, "logprobs": None}
    body: JsonObject = {
        "id": response.id or "chatcmpl-interlock",
        "object": "chat.completion",
        "created": response.created or 0,
        "model": response.model or "",
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = encode_usage(usage, FieldPolicy(dialect=reasoning_dialect, request=False))
    return body


def _plain_message(message: Message) -> JsonObject | None:
    """The answer's message as the message encoder writes it, when of the module's shape."""
    if message.role != "assistant" or message.name is not None or message.extra:
        return None
    texts: list[str] = []
    calls: list[JsonValue] = []
    for part in message.parts:
        if part.extra:
            return None
        if type(part) is TextPart:
            if part.signature is not None or part.citations or part.logprobs:
                return None
            texts.append(part.text)
        elif type(part) is ToolCallPart:
            if part.signature is not None:
                return None
            function: JsonObject = {"name": part.name, "arguments": part.arguments}
            calls.append({"id": part.call_id, "type": "function", "function": function})
        elif type(part) is not ReasoningPart or not _unshown(part):
            return None
    wire: JsonObject = {"role": "assistant"}
    if texts:
        wire["content"] = "".join(texts)
    else:
        wire["content"] = None if calls else ""
    if calls:
        wire["tool_calls"] = calls
    return wire


def _unshown(part: ReasoningPart) -> bool:
    """True for reasoning the general path writes nothing for: not raw text, no OpenRouter
    detail."""
    return part.reasoning_kind != "raw" and own_detail(part) is None
