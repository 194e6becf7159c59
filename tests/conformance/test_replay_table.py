"""The cross-provider replay table: origin dialect × target × part kind → what happens.

Each row is one history holding one kind of part as its origin provider issued it, encoded
for one target under the default policy (strict, foreign opaque dropped). ``replayed``: sent
as received and decoded back; ``dropped``: absent from the payload with a warning naming the
part; ``refused``: ``LossyHistoryError`` naming the part. Opaque payloads are only ever
replayed to their issuer (trap 5); raw and summary reasoning are never relabelled (trap 4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.conformance._features import message_items
from interlock.transcript import (
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

Expect = Literal["replayed", "dropped", "refused"]

SIGNATURE = Opaque(
    provider="google",
    format="gemini.thought_signature",
    data="CiIB4/H/Y29uZm9ybWFuY2Utc2lnbmF0dXJlLW9uZSsv",
)
ENCRYPTED = Opaque(
    provider="openai", format="openai.responses.encrypted_content", data="gAAAAABoX1v2"
)
DETAIL = Opaque(
    provider="openrouter",
    format="openrouter.reasoning_detail",
    data={
        "type": "reasoning.encrypted",
        "data": "eyJ0aGlua2luZyI6",
        "format": "anthropic-claude-v1",
        "index": 0,
    },
)
USER = Message(role="user", parts=(TextPart(text="Weather in Paris?"),))


def text_turn(*parts: Part) -> tuple[Message, ...]:
    """The part in an answered text turn, followed by a new user turn."""
    return (
        USER,
        Message(role="assistant", parts=parts),
        Message(role="user", parts=(TextPart(text="Thanks"),)),
    )


def call_turn(call: ToolCallPart) -> tuple[Message, ...]:
    """The part on a current-turn tool call with its result."""
    result = ToolResultPart(call_id=call.call_id, name=call.name, output=(TextPart(text="15 C"),))
    return (USER, Message(role="assistant", parts=(call,)), Message(role="tool", parts=(result,)))


KINDS: dict[str, Callable[[], tuple[Message, ...]]] = {
    "encrypted_reasoning": lambda: text_turn(
        ReasoningPart(reasoning_kind="encrypted", opaque=ENCRYPTED, item_id="rs_1"),
        TextPart(text="Sunny.", item_id="msg_1"),
    ),
    "signature_on_call": lambda: call_turn(
        ToolCallPart(
            call_id="call_1", name="get_weather", arguments='{"city":"Paris"}', signature=SIGNATURE
        )
    ),
    "signature_on_text": lambda: text_turn(TextPart(text="Sunny.", signature=SIGNATURE)),
    "openrouter_detail": lambda: text_turn(
        ReasoningPart(reasoning_kind="encrypted", opaque=DETAIL), TextPart(text="Sunny.")
    ),
    "raw_reasoning": lambda: text_turn(
        ReasoningPart(reasoning_kind="raw", text="Paris is in France."), TextPart(text="Sunny.")
    ),
    "summary": lambda: text_turn(
        ReasoningPart(reasoning_kind="summary", text="Looked it up."), TextPart(text="Sunny.")
    ),
}
ORIGIN = {
    "encrypted_reasoning": "openai_responses",
    "signature_on_call": "gemini",
    "signature_on_text": "gemini",
    "openrouter_detail": "openai_chat[openrouter]",
    "raw_reasoning": "openai_chat[reasoning_content]",
    "summary": "openai_responses",
}
TARGETS: dict[str, tuple[Any, dict[str, str]]] = {
    "openai_responses": (openai_responses, {}),
    "openai_chat": (openai_chat, {"reasoning_dialect": "none"}),
    "openai_chat[reasoning_content]": (openai_chat, {"reasoning_dialect": "reasoning_content"}),
    "openai_chat[openrouter]": (openai_chat, {"reasoning_dialect": "openrouter"}),
    "openai_chat[gemini-compat]": (openai_chat, {"reasoning_dialect": "gemini-compat"}),
    "gemini": (gemini, {}),
}


@dataclass(frozen=True, slots=True)
class Row:
    kind: str
    target: str
    expect: Expect

    @property
    def id(self) -> str:
        return f"{ORIGIN[self.kind]}->{self.target}:{self.kind}"


# Every row of the table, written out; the defaults say "dropped with a warning".
REPLAYED = {
    ("encrypted_reasoning", "openai_responses"),
    ("signature_on_call", "gemini"),
    ("signature_on_call", "openai_chat[gemini-compat]"),
    ("signature_on_text", "gemini"),
    ("signature_on_text", "openai_chat[gemini-compat]"),
    ("openrouter_detail", "openai_chat[openrouter]"),
    ("raw_reasoning", "openai_chat[reasoning_content]"),
    ("raw_reasoning", "openai_chat[openrouter]"),
    ("summary", "openai_chat[openrouter]"),
}
REFUSED = {
    # trap 1/5: a current-turn call's signature with no carrier at all; strict refuses
    ("signature_on_call", "openai_chat"),
}
TABLE = [
    Row(
        kind,
        target,
        "replayed"
        if (kind, target) in REPLAYED
        else "refused"
        if (kind, target) in REFUSED
        else "dropped",
    )
    for kind in KINDS
    for target in TARGETS
]


@pytest.mark.parametrize("row", TABLE, ids=lambda row: row.id)
def test_replay(row: Row) -> None:
    codec, options = TARGETS[row.target]
    history = KINDS[row.kind]()
    source = [item for item in message_items(history) if item.location == "messages[1].parts[0]"]
    request = Request(model="m", messages=history)
    if row.expect == "refused":
        with pytest.raises(LossyHistoryError) as raised:
            codec.encode_request(request, **options)
        assert raised.value.location == "messages[1].parts[0]"
        return
    encoded = codec.encode_request(request, **options)
    back = {item.key for item in message_items(codec.decode_request(encoded.payload).messages)}
    kept = [item for item in source if item.key in back]
    warned = [warning for warning in encoded.warnings if warning.location.startswith("messages[1]")]
    if row.expect == "replayed":
        assert kept == source
        assert warned == []
    else:
        assert kept != source, "expected the part to be dropped"
        assert warned, "a drop must come with a warning naming the part"
