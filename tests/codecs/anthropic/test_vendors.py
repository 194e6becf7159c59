"""The issuer of a signature: each Anthropic-compatible vendor's codec labels what it decodes
with its vendor and replays only its own (and a client's, of unrecorded issuer); answers
carry any vendor's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.anthropic._tools import decode_tools
from interlock.codecs.registry import wire_codec
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    UNKNOWN_ISSUER,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    ReplayPolicy,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    fold_updates,
    response_to_updates,
)

DEEPSEEK = wire_codec("anthropic", issuer="deepseek")
ANTHROPIC = wire_codec("anthropic")
CALL = ToolCallPart(call_id="toolu_1", name="get_weather", arguments='{"city": "Lima"}')
RESULT = Message(
    role="tool", parts=(ToolResultPart(call_id="toolu_1", output=(TextPart(text="x"),)),)
)
TOOLS: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}


def thought(issuer: str, data: str = "sig", redacted: bool = False) -> ReasoningPart:
    if redacted:
        opaque = Opaque(provider=issuer, format=ANTHROPIC_REDACTED_THINKING, data=data)
        return ReasoningPart(reasoning_kind="encrypted", opaque=opaque)
    opaque = Opaque(provider=issuer, format=ANTHROPIC_THINKING_SIGNATURE, data=data)
    return ReasoningPart(reasoning_kind="raw", text="I think", opaque=opaque)


def ask(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


def tool_step(*reasoning: Part) -> tuple[Message, ...]:
    """A question, the model's step (its reasoning and a call), the call's result."""
    return (ask("weather?"), Message(role="assistant", parts=(*reasoning, CALL)), RESULT)


def finished(*reasoning: Part) -> tuple[Message, ...]:
    """A tool step whose turn ended (the model answered) and a new question."""
    done = Message(role="assistant", parts=(TextPart(text="sunny"),))
    return (*tool_step(*reasoning), done, ask("and tomorrow?"))


def request(*messages: Message) -> Request:
    tools, _ = decode_tools(TOOLS, "tools", {})
    extra: Any = {"anthropic": {"thinking": THINKING}}
    return Request(model="m", messages=messages, tools=tools, extra=extra)


def sent(encoded: Any) -> str:
    return json.dumps(encoded.payload)


def test_decoders_label_signatures_with_their_vendor() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": "S1"}
    redacted = {"type": "redacted_thinking", "data": "R1"}
    answer = {"role": "assistant", "content": [thinking, redacted, {"type": "text", "text": "a"}]}
    body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "q"}, answer]}
    decoded = DEEPSEEK.decode_request(body)
    assert labels(decoded.messages[1].parts) == ["deepseek", "deepseek"]
    plain = {"role": "assistant", "content": [thinking, {"type": "text", "text": "a"}]}
    fast = DEEPSEEK.decode_request({**body, "messages": [body["messages"][0], plain]})
    assert labels(fast.messages[1].parts) == ["deepseek"], "the plain-message path too"
    client = wire_codec("anthropic", issuer=UNKNOWN_ISSUER).decode_request(body)
    assert labels(client.messages[1].parts) == [UNKNOWN_ISSUER, UNKNOWN_ISSUER]
    own = ANTHROPIC.decode_request(body).messages[1].parts
    assert labels(own) == ["anthropic", "anthropic"], "Anthropic's own codec is unchanged"
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m"}
    response.update(content=answer["content"], stop_reason="end_turn", usage={})  # type: ignore[arg-type]
    parts = DEEPSEEK.decode_response(response).message.parts
    assert labels(parts) == ["deepseek", "deepseek"]
    streamed = fold_updates(_stream(DEEPSEEK, response))
    assert streamed.message.parts == parts, "streamed and not agree"


def labels(parts: tuple[Part, ...]) -> list[str]:
    return [p.opaque.provider for p in parts if isinstance(p, ReasoningPart) and p.opaque]


def _stream(codec: Any, response: dict[str, Any]) -> list[Any]:
    encoder = ANTHROPIC.stream_encoder()
    decoded = ANTHROPIC.decode_response(response)
    events = [event for u in response_to_updates(decoded) for event in encoder.encode(u)]
    decoder = codec.stream_decoder()
    return [u for event in events for u in decoder.feed(SseEvent(event.data, event.event))]


@pytest.mark.parametrize("issuer", ["deepseek", UNKNOWN_ISSUER], ids=["own", "unrecorded"])
def test_a_vendors_own_and_unrecorded_signatures_go_back_exactly(issuer: str) -> None:
    history = request(*tool_step(thought(issuer, "S1"), thought(issuer, "R1", redacted=True)))
    encoded = DEEPSEEK.encode_request(history, ReplayPolicy())
    assert encoded.warnings == ()
    blocks = encoded.payload["messages"][1]["content"]  # type: ignore[index]
    assert blocks[:2] == [
        {"type": "thinking", "thinking": "I think", "signature": "S1"},
        {"type": "redacted_thinking", "data": "R1"},
    ]


@pytest.mark.parametrize("redacted", [False, True], ids=["thinking", "redacted"])
def test_another_vendors_signature_on_a_finished_turn_is_dropped(redacted: bool) -> None:
    """Anthropic's signed thinking never goes to DeepSeek (which would refuse it); a
    finished turn does not need it: dropped with a warning, never refused."""
    history = request(*finished(thought("anthropic", "AS", redacted)))
    for policy in (ReplayPolicy(), ReplayPolicy(mode="degrade")):
        encoded = DEEPSEEK.encode_request(history, policy)
        assert "AS" not in sent(encoded) and "I think" not in sent(encoded)
        codes = [(w.code, w.location) for w in encoded.warnings]
        assert codes == [("reasoning_dropped", "messages[1].parts[0]")]
        assert "anthropic's" in encoded.warnings[0].message
        assert "deepseek (Anthropic Messages)" in encoded.warnings[0].message
    # and the other way round: DeepSeek's never goes to Anthropic
    back = request(*finished(thought("deepseek", "DS", redacted)))
    encoded = ANTHROPIC.encode_request(back, ReplayPolicy())
    assert "DS" not in sent(encoded) and [w.code for w in encoded.warnings] == ["reasoning_dropped"]


def test_another_vendors_signature_the_current_step_needs_is_refused_under_strict() -> None:
    history = request(*tool_step(thought("anthropic", "AS")))
    with pytest.raises(LossyHistoryError) as refused:
        DEEPSEEK.encode_request(history, ReplayPolicy())
    assert refused.value.code == "reasoning_not_replayable"
    assert refused.value.location == "messages[1].parts[0]"
    assert "current turn" in str(refused.value)
    degraded = DEEPSEEK.encode_request(history, ReplayPolicy(mode="degrade"))
    assert "AS" not in sent(degraded)
    codes = [w.code for w in degraded.warnings]
    assert codes == ["reasoning_not_replayable", "thinking_disabled"]
    assert degraded.payload["thinking"] == {"type": "disabled"}


def test_a_step_with_only_another_vendors_thinking_is_not_sent_empty() -> None:
    only = Message(role="assistant", parts=(thought("anthropic", "AS"),))
    history = request(ask("q"), only, ask("again"))
    encoded = DEEPSEEK.encode_request(history, ReplayPolicy())
    assert [m["role"] for m in encoded.payload["messages"]] == ["user"]  # type: ignore[union-attr]
    assert [w.location for w in encoded.warnings] == ["messages[1].parts[0]"]


def test_answers_carry_any_vendors_signature() -> None:
    """A client keeps the thinking blocks it gets: an answer shows the vendor's signature
    whatever the label (the client sends it back; the gateway knows where it goes)."""
    parts = (
        thought("deepseek", "DS"),
        thought("deepseek", "DR", redacted=True),
        TextPart(text="a"),
    )
    answer = Response(message=Message(role="assistant", parts=parts), finish_reason="stop")
    ingress = wire_codec("anthropic", issuer=UNKNOWN_ISSUER)
    body = ingress.encode_response(answer)
    assert body["content"][:2] == [  # type: ignore[index]
        {"type": "thinking", "thinking": "I think", "signature": "DS"},
        {"type": "redacted_thinking", "data": "DR"},
    ]
    encoder = ingress.stream_encoder()
    events = [e for u in response_to_updates(answer) for e in encoder.encode(u)]
    text = "".join(event.data for event in events)
    assert '"signature": "DS"' in text.replace('":"', '": "') and "DR" in text
