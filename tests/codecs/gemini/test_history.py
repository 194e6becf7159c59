"""History encoding: system placement, turn grouping, the current-turn signature rule."""

from __future__ import annotations

import base64

import pytest

from interlock.codecs import gemini
from interlock.codecs.gemini._wire import signature
from interlock.transcript import (
    JsonObject,
    LossyHistoryError,
    Message,
    Opaque,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.codecs.gemini.wire_fixtures import validate_request

SIG = signature("CiIB4/H/Xk+sig/0")
OPENAI_BLOB = Opaque(provider="openai", format="openai.responses.encrypted_content", data="gAAAA")
DEGRADE = ReplayPolicy(mode="degrade")


def user(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


def calls(*parts: ToolCallPart) -> Message:
    return Message(role="assistant", parts=parts)


def call(call_id: str, *, signed: Opaque | None = None, name: str = "get_weather") -> ToolCallPart:
    return ToolCallPart(call_id=call_id, name=name, arguments='{"city": "Paris"}', signature=signed)


def result(call_id: str, text: str = "sunny") -> Message:
    return Message(
        role="tool",
        parts=(ToolResultPart(call_id=call_id, name="get_weather", output=(TextPart(text=text),)),),
    )


def request(*messages: Message) -> Request:
    return Request(model="gemini-3-flash-preview", messages=messages)


def contents(encoded: JsonObject) -> list[JsonObject]:
    value = encoded["contents"]
    assert isinstance(value, list)
    return value  # pyright: ignore[reportReturnType]


def test_signed_current_turn_is_replayed_exactly() -> None:
    history = request(
        user("weather?"), calls(call("c1", signed=SIG), call("c2")), result("c1"), result("c2")
    )
    encoded = gemini.encode_request(history)
    model = contents(encoded.payload)[1]
    assert model["parts"] == [
        {
            "functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": SIG.data,
        },
        {"functionCall": {"id": "c2", "name": "get_weather", "args": {"city": "Paris"}}},
    ]
    validate_request(encoded.payload)
    assert encoded.warnings == ()


def test_tool_results_are_grouped_into_one_response_turn_with_equal_counts() -> None:
    """Trap 21: one user turn of functionResponse parts right after the call turn."""
    history = request(
        user("weather?"),
        calls(call("c1", signed=SIG), call("c2")),
        result("c1"),
        result("c2", "rain"),
    )
    turns = contents(gemini.encode_request(history).payload)
    assert [turn["role"] for turn in turns] == ["user", "model", "user"]
    responses = turns[2]["parts"]
    assert isinstance(responses, list) and len(responses) == 2
    assert responses[1] == {
        "functionResponse": {"id": "c2", "name": "get_weather", "response": {"output": "rain"}}
    }


def test_missing_signature_in_current_turn_is_refused_in_strict_mode() -> None:
    """Trap 5: a call without its Gemini signature cannot be sent to Gemini 3."""
    history = request(user("weather?"), calls(call("c1")), result("c1"))
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.location == "messages[1].parts[0]"
    assert caught.value.code == "missing_signature"


def test_each_step_of_the_current_turn_needs_its_own_signature() -> None:
    history = request(
        user("book it"),
        calls(call("c1", signed=SIG)),
        result("c1"),
        calls(TextPart(text="Now the taxi."), call("c2")),
        result("c2"),
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.location == "messages[3].parts[1]"


def test_earlier_turns_are_not_checked() -> None:
    history = request(user("first"), calls(call("c1")), result("c1"), user("second"))
    encoded = gemini.encode_request(history)
    assert encoded.warnings == ()


def test_degrade_mode_sends_the_literal_dummy_and_warns() -> None:
    """Trap 10: the dummy is never implicit; literal string form by default."""
    history = request(user("weather?"), calls(call("c1"), call("c2")), result("c1"), result("c2"))
    encoded = gemini.encode_request(history, policy=DEGRADE)
    first, second = contents(encoded.payload)[1]["parts"]  # pyright: ignore[reportGeneralTypeIssues]
    assert first["thoughtSignature"] == "skip_thought_signature_validator"  # pyright: ignore[reportIndexIssue]
    assert "thoughtSignature" not in second  # pyright: ignore[reportOperatorIssue]
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("dummy_signature", "messages[1].parts[0]")
    ]
    validate_request(encoded.payload)


def test_dummy_form_is_a_per_endpoint_setting() -> None:
    history = request(user("weather?"), calls(call("c1")), result("c1"))
    policy = ReplayPolicy(
        mode="degrade", gemini_dummy_signature="context_engineering_is_the_way_to_go"
    )
    encoded = gemini.encode_request(history, policy=policy, dummy_signature_form="base64")
    part = contents(encoded.payload)[1]["parts"][0]  # pyright: ignore[reportIndexIssue]
    assert (
        part["thoughtSignature"]
        == base64.b64encode(b"context_engineering_is_the_way_to_go").decode()
    )  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]


def test_gemini_2_upstreams_may_skip_the_signature_rule() -> None:
    history = request(user("weather?"), calls(call("c1")), result("c1"))
    encoded = gemini.encode_request(history, require_signatures=False)
    assert "thoughtSignature" not in contents(encoded.payload)[1]["parts"][0]  # pyright: ignore[reportOperatorIssue, reportIndexIssue]


def test_foreign_signature_on_a_call_is_dropped_then_the_rule_applies() -> None:
    foreign = Opaque(
        provider="openrouter", format="openrouter.reasoning_detail", data={"type": "x"}
    )
    history = request(user("weather?"), calls(call("c1", signed=foreign)), result("c1"))
    encoded = gemini.encode_request(history, policy=DEGRADE)
    assert [w.code for w in encoded.warnings] == ["opaque_dropped", "dummy_signature"]
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.code == "missing_signature"
    with pytest.raises(LossyHistoryError) as refused:
        gemini.encode_request(history, policy=ReplayPolicy(mode="degrade", foreign_opaque="refuse"))
    assert (refused.value.code, refused.value.location) == (
        "foreign_opaque",
        "messages[1].parts[0]",
    )


def test_mid_conversation_system_message_is_refused_or_moved() -> None:
    """Trap 29: one leading systemInstruction; a later one is refused or moved with a warning."""
    history = request(
        Message(role="system", parts=(TextPart(text="Be brief."),)),
        user("hi"),
        Message(role="system", parts=(TextPart(text="Now be verbose."),)),
        user("again"),
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert (caught.value.location, caught.value.code) == ("messages[2]", "misplaced_system")
    encoded = gemini.encode_request(history, policy=DEGRADE)
    assert encoded.payload["systemInstruction"] == {
        "parts": [{"text": "Be brief."}, {"text": "Now be verbose."}]
    }
    assert [turn["parts"] for turn in contents(encoded.payload)] == [
        [{"text": "hi"}],
        [{"text": "again"}],
    ]
    assert [w.code for w in encoded.warnings] == ["system_moved"]


def test_developer_message_goes_to_system_instruction_with_a_warning() -> None:
    history = request(Message(role="developer", parts=(TextPart(text="Rules."),)), user("hi"))
    encoded = gemini.encode_request(history)
    assert encoded.payload["systemInstruction"] == {"parts": [{"text": "Rules."}]}
    assert [w.code for w in encoded.warnings] == ["developer_as_system"]


def test_history_ending_in_a_function_response_turn_is_the_current_turn() -> None:
    """The walk back stops at user content with more than function responses only."""
    history = request(
        user("go"),
        calls(call("c1", signed=SIG)),
        result("c1"),
        calls(call("c2", signed=SIG)),
        result("c2"),
        calls(call("c3")),
        result("c3"),
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.location == "messages[5].parts[0]"


def test_stateful_continuation_is_refused_in_strict_mode() -> None:
    """Trap 33: previous_response_id history is not visible to Gemini."""
    from interlock.transcript import Continuation

    history = Request(
        model="m", messages=(user("hi"),), continuation=Continuation(previous_response_id="resp_1")
    )
    with pytest.raises(LossyHistoryError) as caught:
        gemini.encode_request(history)
    assert caught.value.code == "stateful_history"
    assert [w.code for w in gemini.encode_request(history, policy=DEGRADE).warnings] == [
        "continuation_ignored"
    ]


def test_trap6_trap7_signed_text_parts_keep_their_boundaries_and_position() -> None:
    """Traps 6/7: signed and unsigned text parts are never merged; the signature stays put."""
    turn = Message(
        role="assistant",
        parts=(
            TextPart(text="First "),
            TextPart(text="part.", signature=SIG),
            TextPart(text=" After."),
            TextPart(text="", signature=SIG),
        ),
    )
    encoded = gemini.encode_request(request(user("hi"), turn, user("more")))
    assert contents(encoded.payload)[1]["parts"] == [
        {"text": "First "},
        {"text": "part.", "thoughtSignature": SIG.data},
        {"text": " After."},
        {"text": "", "thoughtSignature": SIG.data},
    ]
    assert encoded.warnings == ()
    back = gemini.decode_request(encoded.payload, model="gemini-3-flash-preview")
    assert back.messages[1].parts[:3] == turn.parts[:3]  # the empty carrier decodes as reasoning
    assert gemini.encode_request(back).payload == encoded.payload


def test_trap6_only_the_signed_call_of_a_parallel_batch_carries_the_signature() -> None:
    """Trap 6: a second signed batch keeps each signature on its own first call, none copied."""
    other = signature("T3RoZXI=")
    history = request(
        user("weather?"),
        calls(call("c1", signed=SIG), call("c2"), call("c3")),
        result("c1"),
        result("c2"),
        result("c3"),
        calls(call("c4", signed=other), call("c5")),
        result("c4"),
        result("c5"),
    )
    turns = contents(gemini.encode_request(history).payload)
    signed = [
        [part.get("thoughtSignature") for part in turn["parts"]]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        for turn in turns
        if turn["role"] == "model"
    ]
    assert signed == [[SIG.data, None, None], [other.data, None]]


def test_trap30_a_participant_name_is_never_dropped_silently() -> None:
    named = Message(role="user", name="alice", parts=(TextPart(text="hi"),))
    encoded = gemini.encode_request(request(named))
    assert [(w.code, w.location) for w in encoded.warnings] == [("name_dropped", "messages[0]")]


@pytest.mark.parametrize(
    ("model", "required"),
    [
        ("gemini-2.5-flash", False),
        ("models/gemini-2.0-flash", False),
        ("gemini-1.5-pro", False),
        ("gemma-3-27b-it", False),
        ("gemini-3-pro-preview", True),
        ("gemini-flash-latest", True),
        ("", True),
    ],
)
def test_signatures_are_required_only_where_the_model_needs_them(
    model: str, required: bool
) -> None:
    """Gemini 1.x/2.x and Gemma never required thought signatures; Gemini 3 (and any name
    that does not say otherwise) does. ``require_signatures`` overrides it per call."""
    from interlock.codecs.gemini._request import signatures_required

    assert signatures_required(model) is required


def test_a_gemini_2_history_without_signatures_is_sent_and_the_override_wins() -> None:
    from dataclasses import replace

    history = request(user("weather?"), calls(call("c1")), result("c1"))
    older = replace(history, model="gemini-2.5-flash")
    assert gemini.encode_request(older).warnings == ()
    with pytest.raises(LossyHistoryError):
        gemini.encode_request(older, require_signatures=True)
    gemini.encode_request(replace(history, model="gemini-3-pro"), require_signatures=False)
