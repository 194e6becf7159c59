"""Part encoding: the cross-provider replay table and the parts Gemini cannot carry."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import pytest

from interlock.codecs import gemini
from interlock.codecs.gemini._wire import signature
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    JsonPart,
    JsonValue,
    LossyHistoryError,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    response_to_updates,
)
from tests.codecs.gemini.wire_fixtures import validate_request

GEMINI = signature("CiIB4/H/Xk+sig/0")
OPENAI = Opaque(provider="openai", format="openai.responses.encrypted_content", data="gAAAAB")
OPENROUTER = Opaque(
    provider="openrouter",
    format="openrouter.reasoning_detail",
    data={"type": "reasoning.encrypted", "data": "x"},
)
ORIGINS = {"gemini": GEMINI, "openai": OPENAI, "openrouter": OPENROUTER}
Outcome = Literal["replayed", "dropped", "refused"]


@dataclass(frozen=True)
class ReplayCase:
    """Origin of an opaque payload × the part kind it rides on → what Gemini gets."""

    origin: str
    kind: str
    drop_policy: Outcome
    refuse_policy: Outcome

    @property
    def id(self) -> str:
        return f"{self.origin}-{self.kind}"


def carrier(kind: str, opaque: Opaque) -> Part:
    match kind:
        case "encrypted_reasoning":
            return ReasoningPart(reasoning_kind="encrypted", opaque=opaque)
        case "summary_reasoning":
            return ReasoningPart(reasoning_kind="summary", text="I thought.", opaque=opaque)
        case "text_signature":
            return TextPart(text="Answer.", signature=opaque)
        case _:
            return ToolCallPart(call_id="c1", name="f", arguments="{}", signature=opaque)


REPLAY_TABLE = [
    ReplayCase(
        origin,
        kind,
        "replayed" if origin == "gemini" else "dropped",
        "replayed" if origin == "gemini" else "refused",
    )
    for origin in ORIGINS
    for kind in (
        "encrypted_reasoning",
        "summary_reasoning",
        "text_signature",
        "tool_call_signature",
    )
]


def encode_one(part: Part, policy: ReplayPolicy) -> tuple[dict[str, object], list[str]]:
    """Encode ``part`` in an earlier (unchecked) model turn; return its content and warning codes."""
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(role="assistant", parts=(part,)),
            Message(role="user", parts=(TextPart(text="next"),)),
        ),
    )
    encoded = gemini.encode_request(history, policy=policy, require_signatures=False)
    validate_request(encoded.payload)
    contents = encoded.payload["contents"]
    assert isinstance(contents, list)
    return contents[1], [warning.code for warning in encoded.warnings]  # pyright: ignore[reportReturnType]


def refusal(history: Request) -> tuple[str, str]:
    """``(code, location)`` of the strict refusal of ``history`` (fails if it is accepted)."""
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    return caught.value.code, caught.value.location


def degraded(history: Request) -> tuple[JsonValue, list[tuple[str, str]]]:
    """The degrade-mode ``contents`` (SDK-validated) and ``(code, location)`` of each warning."""
    encoded = gemini.encode_request(history, policy=ReplayPolicy(mode="degrade"))
    validate_request(encoded.payload)
    return encoded.payload["contents"], [(w.code, w.location) for w in encoded.warnings]


@pytest.mark.parametrize("case", REPLAY_TABLE, ids=lambda case: case.id)
def test_cross_provider_replay_table(case: ReplayCase) -> None:
    """Trap 5: opaque payloads are replayed only to their issuer; others dropped or refused."""
    part = carrier(case.kind, ORIGINS[case.origin])
    for policy, expected in (
        (ReplayPolicy(), case.drop_policy),
        (ReplayPolicy(foreign_opaque="refuse"), case.refuse_policy),
    ):
        if expected == "refused":
            with pytest.raises(LossyHistoryError) as caught:
                encode_one(part, policy)
            assert (caught.value.code, caught.value.location) == (
                "foreign_opaque",
                "messages[1].parts[0]",
            )
            continue
        content, warnings = encode_one(part, policy)
        serialized = repr(content)
        if expected == "replayed":
            assert f"'thoughtSignature': '{GEMINI.data}'" in serialized
            assert warnings == []
        else:
            assert "thoughtSignature" not in serialized
            assert "opaque_dropped" in warnings


def test_foreign_reasoning_text_is_not_sent_as_a_gemini_thought() -> None:
    """Trap 4: another provider's summary or raw chain of thought is not a Gemini thought."""
    for kind in ("summary", "raw"):
        history = Request(
            model="m",
            messages=(
                Message(role="user", parts=(TextPart(text="q"),)),
                Message(
                    role="assistant",
                    parts=(ReasoningPart(reasoning_kind=kind, text="hmm"), TextPart(text="a")),
                ),  # pyright: ignore[reportArgumentType]
            ),
        )
        encoded = gemini.encode_request(history)
        assert encoded.payload["contents"][1] == {"role": "model", "parts": [{"text": "a"}]}  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportArgumentType, reportCallIssue]
        assert [warning.code for warning in encoded.warnings] == ["reasoning_dropped"]


def test_parts_without_a_gemini_form_are_reported() -> None:
    """Trap 25/28: refusals, bare JSON and other providers' hosted items never vanish silently."""
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"), JsonPart(value={"a": 1}))),
            Message(
                role="assistant",
                parts=(
                    RefusalPart(text="No."),
                    HostedToolPart(
                        provider="openai", item_type="mcp_call", item={"type": "mcp_call"}
                    ),
                    HostedToolPart(
                        provider="google",
                        item_type="executableCode",
                        item={"executableCode": {"code": "1", "language": "PYTHON"}},
                    ),
                ),
            ),
        ),
    )
    assert refusal(history) == ("hosted_item_unsupported", "messages[1].parts[1]")
    contents, warnings = degraded(history)
    assert contents == [
        {"role": "user", "parts": [{"text": "q"}, {"text": '{"a": 1}'}]},
        {
            "role": "model",
            "parts": [{"text": "No."}, {"executableCode": {"code": "1", "language": "PYTHON"}}],
        },
    ]
    assert warnings == [
        ("json_as_text", "messages[0].parts[1]"),
        ("refusal_as_text", "messages[1].parts[0]"),
        ("hosted_item_unsupported", "messages[1].parts[1]"),
    ]


def test_control_parts_are_never_sent_to_the_model() -> None:
    call = ToolCallPart(call_id="c1", name="delete", arguments="{}")
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(role="assistant", parts=(ApprovalRequestPart(approval_id="a1", call=call),)),
            Message(
                role="user",
                parts=(ApprovalResponsePart(approval_id="a1", approved=True), TextPart(text="ok")),
            ),
        ),
    )
    encoded = gemini.encode_request(history)
    assert encoded.payload["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "user", "parts": [{"text": "ok"}]},
    ]
    assert encoded.warnings == ()


HOSTED_CALL = ToolCallPart(
    call_id="mcpr_1",
    name="ask_question",
    arguments='{"question":"transports"}',
    owner="hosted",
    server_label="deepwiki",
)


def hosted_approval_history(*, with_request: bool = True) -> Request:
    """A Responses MCP approval: the service's request, then the user's decision."""
    request = ApprovalRequestPart(approval_id="mcpr_1", call=HOSTED_CALL)
    return Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="assistant",
                parts=(TextPart(text="May I?"), *((request,) if with_request else ())),
            ),
            Message(
                role="user", parts=(ApprovalResponsePart(approval_id="mcpr_1", approved=True),)
            ),
        ),
    )


def test_hosted_approvals_are_refused_in_strict_mode() -> None:
    """A hosted (MCP) approval is model history Gemini cannot carry: never dropped silently."""
    assert refusal(hosted_approval_history()) == (
        "hosted_approval_unsupported",
        "messages[1].parts[1]",
    )


def test_hosted_approvals_are_dropped_with_a_warning_each_in_degrade_mode() -> None:
    contents, warnings = degraded(hosted_approval_history())
    assert contents == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"text": "May I?"}]},
    ]
    assert warnings == [
        ("hosted_approval_unsupported", "messages[1].parts[1]"),
        ("hosted_approval_unsupported", "messages[2].parts[0]"),
    ]


def test_a_decision_answering_no_request_is_not_dropped_silently() -> None:
    """Without its request a decision may be a hosted one; strict refuses, degrade warns."""
    history = hosted_approval_history(with_request=False)
    assert refusal(history) == ("approval_unmatched", "messages[2].parts[0]")
    assert degraded(history)[1] == [("approval_unmatched", "messages[2].parts[0]")]


def test_a_hosted_call_and_its_result_are_never_sent_as_a_function_call() -> None:
    """A service-executed call is not Gemini's function call; its result goes with it."""
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(role="assistant", parts=(HOSTED_CALL,)),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id="mcpr_1", output=(TextPart(text="sse, http"),)),),
            ),
            Message(role="user", parts=(TextPart(text="thanks"),)),
        ),
    )
    assert refusal(history) == ("hosted_call_unsupported", "messages[1].parts[0]")
    contents, warnings = degraded(history)
    assert contents == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "user", "parts": [{"text": "thanks"}]},
    ]
    assert warnings == [
        ("hosted_call_unsupported", "messages[1].parts[0]"),
        ("hosted_call_unsupported", "messages[2].parts[0]"),
    ]


@pytest.mark.parametrize("streaming", [False, True], ids=["response", "stream"])
def test_a_response_never_shows_a_hosted_approval_and_never_fails(streaming: bool) -> None:
    """``encode_response`` has no warning channel: the request encoder is where it is reported."""
    message = Message(
        role="assistant",
        parts=(
            TextPart(text="May I?"),
            ApprovalRequestPart(approval_id="mcpr_1", call=HOSTED_CALL),
        ),
    )
    response = Response(message=message, finish_reason="stop")
    if streaming:
        encoder = gemini.StreamEncoder()
        events = [
            event for update in response_to_updates(response) for event in encoder.encode(update)
        ]
        text = "".join(event.data for event in [*events, *encoder.finish()])
    else:
        text = json.dumps(gemini.encode_response(response))
    assert "May I?" in text
    assert "mcpr_1" not in text
    assert "ask_question" not in text


@pytest.mark.parametrize("arguments", ['{"a": ', "[1, 2]", '"text"', "nan"])
def test_malformed_or_non_object_arguments_are_refused_even_in_degrade_mode(arguments: str) -> None:
    """Trap 19: Gemini args is an object; malformed JSON is never "fixed"."""
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="assistant",
                parts=(ToolCallPart(call_id="c", name="f", arguments=arguments, signature=GEMINI),),
            ),
        ),
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history, policy=ReplayPolicy(mode="degrade"))
    assert (caught.value.code, caught.value.location) == (
        "malformed_arguments",
        "messages[1].parts[0]",
    )


def test_argument_text_is_canonicalised_but_its_values_survive() -> None:
    """Trap 19: string → object → string keeps every value and key order."""
    arguments = '{ "b": 1.50, "a": [true, null, "é"] }'
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="assistant",
                parts=(ToolCallPart(call_id="c", name="f", arguments=arguments, signature=GEMINI),),
            ),
        ),
    )
    payload = gemini.encode_request(history).payload
    back = gemini.decode_request(payload).messages[1].parts[0]
    assert isinstance(back, ToolCallPart)
    assert back.arguments == '{"b":1.5,"a":[true,null,"é"]}'
    assert (
        back.parsed_arguments
        == ToolCallPart(call_id="c", name="f", arguments=arguments).parsed_arguments
    )


def test_media_part_without_data_or_uri_is_refused() -> None:
    history = Request(
        model="m", messages=(Message(role="user", parts=(MediaPart(media_type="image/png"),)),)
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.code == "empty_media"


def test_tool_result_without_any_name_is_refused() -> None:
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="tool", parts=(ToolResultPart(call_id="orphan", output=(TextPart(text="x"),)),)
            ),
        ),
    )
    assert refusal(history) == ("unnamed_result", "messages[1].parts[0]")
