"""Reasoning dialects: what each upstream receives, and the traps that touch Chat.

Table-driven: canonical reasoning of every kind and origin × target dialect →
sent (and how) / dropped with a warning / refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from interlock.codecs.openai_chat import ReasoningDialect, decode_request, encode_request
from interlock.transcript import (
    JsonObject,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

OPENAI_BLOB = Opaque(provider="openai", format="openai.responses.encrypted_content", data="gAAA")
GEMINI_SIG = Opaque(provider="google", format="gemini.thought_signature", data="CiIB4/H/Xk==")
DETAIL: JsonObject = {
    "type": "reasoning.text",
    "text": "raw",
    "signature": "sig",
    "format": "anthropic-claude-v1",
    "index": 0,
}
OPENROUTER = Opaque(provider="openrouter", format="openrouter.reasoning_detail", data=DETAIL)

RAW = ReasoningPart(reasoning_kind="raw", text="raw thought")
SUMMARY = ReasoningPart(reasoning_kind="summary", text="a summary")
ENCRYPTED = ReasoningPart(reasoning_kind="encrypted", opaque=OPENAI_BLOB)
SUMMARY_WITH_BLOB = ReasoningPart(reasoning_kind="summary", text="a summary", opaque=OPENAI_BLOB)
ROUTER_DETAIL = ReasoningPart(reasoning_kind="raw", text="raw", opaque=OPENROUTER)
CALL = ToolCallPart(call_id="call_1", name="f", arguments="{}")


def _history(parts: tuple[Part, ...], *, current: bool = True) -> Request:
    """user → assistant(parts + call) → tool [→ user when the step is not current]."""
    messages = [
        Message(role="user", parts=(TextPart(text="go"),)),
        Message(role="assistant", parts=(*parts, CALL)),
        Message(
            role="tool", parts=(ToolResultPart(call_id="call_1", output=(TextPart(text="ok"),)),)
        ),
    ]
    if not current:
        messages.append(Message(role="user", parts=(TextPart(text="next"),)))
    return Request(model="m", messages=tuple(messages))


@dataclass(frozen=True)
class Case:
    id: str
    part: ReasoningPart
    dialect: ReasoningDialect
    fields: dict[str, Any]
    warnings: tuple[str, ...] = ()
    current: bool = True


CASES = [
    Case("raw-to-deepseek", RAW, "reasoning_content", {"reasoning_content": "raw thought"}),
    Case("raw-to-vllm", RAW, "reasoning", {"reasoning": "raw thought"}),
    Case("raw-to-none-dropped", RAW, "none", {}, ("reasoning_dropped",)),
    Case("raw-to-gemini-dropped", RAW, "gemini-compat", {}, ("reasoning_dropped",), current=False),
    Case(
        "raw-to-openrouter-as-text-detail",
        RAW,
        "openrouter",
        {
            "reasoning_details": [
                {"type": "reasoning.text", "text": "raw thought", "format": "unknown"}
            ]
        },
    ),
    # Trap 4: a summary is never sent as raw reasoning; the key stays (trap 12), empty.
    Case(
        "summary-to-deepseek-not-fabricated",
        SUMMARY,
        "reasoning_content",
        {"reasoning_content": ""},
        ("reasoning_summary_dropped",),
    ),
    Case(
        "summary-to-vllm-not-fabricated", SUMMARY, "reasoning", {}, ("reasoning_summary_dropped",)
    ),
    Case(
        "summary-to-openrouter",
        SUMMARY,
        "openrouter",
        {
            "reasoning_details": [
                {"type": "reasoning.summary", "summary": "a summary", "format": "unknown"}
            ]
        },
    ),
    # Trap 1 outside the current turn: nothing needs it any more; dropped with a warning.
    Case("openai-blob-old-turn-to-none", ENCRYPTED, "none", {}, ("opaque_dropped",), current=False),
    Case(
        "openai-blob-to-deepseek",
        ENCRYPTED,
        "reasoning_content",
        {"reasoning_content": ""},
        ("opaque_dropped",),
    ),
    Case(
        "summary-with-blob-to-openrouter",
        SUMMARY_WITH_BLOB,
        "openrouter",
        {
            "reasoning_details": [
                {"type": "reasoning.summary", "summary": "a summary", "format": "unknown"}
            ]
        },
        ("opaque_dropped",),
    ),
    # Trap 14: OpenRouter details go back whole, keys and order untouched.
    Case("openrouter-detail-whole", ROUTER_DETAIL, "openrouter", {"reasoning_details": [DETAIL]}),
    Case(
        "openrouter-detail-to-vllm",
        ROUTER_DETAIL,
        "reasoning",
        {"reasoning": "raw"},
        ("opaque_dropped",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reasoning_replay_table(case: Case) -> None:
    encoded = encode_request(
        _history((case.part,), current=case.current), reasoning_dialect=case.dialect
    )
    assistant = encoded.payload["messages"][1]  # type: ignore[index]
    fields = {
        k: v
        for k, v in assistant.items()
        if k in ("reasoning_content", "reasoning", "reasoning_details")
    }  # type: ignore[union-attr]
    assert fields == case.fields
    assert tuple(w.code for w in encoded.warnings) == case.warnings
    assert all(w.location == "messages[1].parts[0]" for w in encoded.warnings)


@pytest.mark.parametrize(
    "part", [ENCRYPTED, ReasoningPart(reasoning_kind="encrypted", opaque=GEMINI_SIG)]
)
def test_trap1_current_turn_opaque_reasoning_is_refused_for_openai_chat(
    part: ReasoningPart,
) -> None:
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(_history((part,)), reasoning_dialect="none")
    assert caught.value.location == "messages[1].parts[0]"
    degraded = encode_request(
        _history((part,)), reasoning_dialect="none", policy=ReplayPolicy(mode="degrade")
    )
    assert [w.code for w in degraded.warnings] == ["reasoning_required"]


def test_foreign_opaque_refused_when_the_policy_says_so() -> None:
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(
            _history((ENCRYPTED,)),
            reasoning_dialect="reasoning_content",
            policy=ReplayPolicy(foreign_opaque="refuse"),
        )
    assert caught.value.code == "opaque_refused"


def test_trap12_deepseek_key_present_on_every_tool_call_message_even_empty() -> None:
    encoded = encode_request(_history(()), reasoning_dialect="reasoning_content")
    assert encoded.payload["messages"][1]["reasoning_content"] == ""  # type: ignore[index]
    plain = encode_request(_history(()), reasoning_dialect="reasoning")
    assert "reasoning" not in plain.payload["messages"][1]  # type: ignore[operator]


def _assistant(fields: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "assistant", "content": "x", **fields}]}


def test_trap13_every_carrier_is_read() -> None:
    both = decode_request(_assistant({"reasoning_content": "a", "reasoning": "b"}))
    parts = both.messages[0].parts
    assert [(p.kind, getattr(p, "text", None)) for p in parts] == [
        ("reasoning", "a"),
        ("reasoning", "b"),
        ("text", "x"),
    ]
    vllm = decode_request(_assistant({"reasoning": "b"}))
    moved = encode_request(vllm, reasoning_dialect="reasoning_content")
    assert moved.payload["messages"][0]["reasoning_content"] == "b"  # type: ignore[index]


def test_one_reasoning_sent_in_both_raw_carriers_is_one_part() -> None:
    """ruby_llm sends DeepSeek's reasoning as ``reasoning_content`` and ``reasoning`` alike
    (recorded in the corpus): one reasoning, not two, so a translation never doubles it; the
    same-dialect round trip still gives both keys back."""
    body = _assistant({"reasoning_content": "think", "reasoning": "think"})
    request = decode_request(body)
    reasoning = [p for p in request.messages[0].parts if isinstance(p, ReasoningPart)]
    assert [(p.text, p.reasoning_kind) for p in reasoning] == [("think", "raw")]
    assert encode_request(request).payload == body
    deepseek = encode_request(request, reasoning_dialect="reasoning_content").payload
    assert deepseek["messages"][0]["reasoning_content"] == "think"  # type: ignore[index]


def test_trap14_openrouter_flat_reasoning_is_not_decoded_twice() -> None:
    details = [
        {"type": "reasoning.summary", "summary": "S", "format": "openai-responses-v1", "index": 0},
        {
            "type": "reasoning.encrypted",
            "data": "blob",
            "format": "openai-responses-v1",
            "index": 1,
        },
        {"type": "reasoning.future", "payload": {"x": 1}, "index": 2},
    ]
    request = decode_request(_assistant({"reasoning": "S", "reasoning_details": details}))
    reasoning = [p for p in request.messages[0].parts if isinstance(p, ReasoningPart)]
    assert [(p.reasoning_kind, p.text) for p in reasoning] == [
        ("summary", "S"),
        ("encrypted", ""),
        ("encrypted", ""),
    ]
    assert [p.opaque.data for p in reasoning if p.opaque] == details


def test_trap15_gemini_signatures_stay_on_their_exact_part() -> None:
    request = decode_request(
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": "thinking aloud",
                    "extra_content": {"google": {"thought_signature": "TEXT=="}, "other": 1},
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                            "extra_content": {"google": {"thought_signature": "CALL=="}},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        },
                    ],
                },
            ],
        }
    )
    text, first, second = request.messages[1].parts
    assert (
        isinstance(text, TextPart)
        and text.signature is not None
        and text.signature.data == "TEXT=="
    )
    assert isinstance(first, ToolCallPart) and first.signature == Opaque(
        provider="google", format="gemini.thought_signature", data="CALL=="
    )
    assert isinstance(second, ToolCallPart) and second.signature is None
    assert request.messages[1].extra["openai-chat"] == {"extra_content": {"other": 1}}


def _gemini_turn(signature: Opaque | None) -> Request:
    call = ToolCallPart(call_id="c1", name="f", arguments="{}", signature=signature)
    second = ToolCallPart(call_id="c2", name="f", arguments="{}")
    return Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="go"),)),
            Message(role="assistant", parts=(call, second)),
            Message(
                role="tool", parts=(ToolResultPart(call_id="c1"), ToolResultPart(call_id="c2"))
            ),
        ),
    )


def test_gemini_compat_sends_the_signature_on_the_first_call_only() -> None:
    encoded = encode_request(_gemini_turn(GEMINI_SIG), reasoning_dialect="gemini-compat")
    calls = encoded.payload["messages"][1]["tool_calls"]  # type: ignore[index]
    assert calls[0]["extra_content"] == {"google": {"thought_signature": "CiIB4/H/Xk=="}}  # type: ignore[index]
    assert "extra_content" not in calls[1]  # type: ignore[operator]
    assert [m["role"] for m in encoded.payload["messages"]] == ["user", "assistant", "tool", "tool"]  # type: ignore[index, union-attr]


def test_gemini_compat_refuses_a_current_turn_call_without_signature() -> None:
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(_gemini_turn(None), reasoning_dialect="gemini-compat")
    assert caught.value.location == "messages[1].parts[0]"
    degraded = encode_request(
        _gemini_turn(None), reasoning_dialect="gemini-compat", policy=ReplayPolicy(mode="degrade")
    )
    calls = degraded.payload["messages"][1]["tool_calls"]  # type: ignore[index]
    assert (
        calls[0]["extra_content"]["google"]["thought_signature"]
        == "skip_thought_signature_validator"
    )  # type: ignore[index]
    assert [w.code for w in degraded.warnings] == ["signature_required"]


def test_gemini_signature_to_another_dialect_is_dropped_with_a_warning() -> None:
    encoded = encode_request(_gemini_turn(GEMINI_SIG), reasoning_dialect="reasoning")
    assert "extra_content" not in encoded.payload["messages"][1]["tool_calls"][0]  # type: ignore[index, operator]
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("opaque_dropped", "messages[1].parts[0]")
    ]
