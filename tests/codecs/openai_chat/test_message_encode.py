"""Canonical messages → Chat messages: pairing pre-flight, tool results, control parts."""

from __future__ import annotations

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from interlock.codecs.openai_chat import (
    REASONING_DIALECTS,
    ReasoningDialect,
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    HostedToolSpec,
    JsonPart,
    LossyHistoryError,
    MediaPart,
    Message,
    RefusalPart,
    ReplayPolicy,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    fold_updates,
    response_to_updates,
)

USER = Message(role="user", parts=(TextPart(text="go"),))
CALL_A = ToolCallPart(call_id="a", name="f", arguments="{}")
CALL_B = ToolCallPart(call_id="b", name="f", arguments="{}")


def _result(call_id: str, *output: TextPart | JsonPart | MediaPart) -> Message:
    return Message(role="tool", parts=(ToolResultPart(call_id=call_id, output=output),))


def _request(*messages: Message) -> Request:
    return Request(model="m", messages=messages)


def test_missing_result_is_refused_naming_the_assistant_message() -> None:
    history = _request(USER, Message(role="assistant", parts=(CALL_A, CALL_B)), _result("a"), USER)
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history)
    assert caught.value.location == "messages[1]"
    assert caught.value.reason.endswith("did not have response messages: b")
    assert caught.value.code == "tool_pairing"


def test_orphan_result_is_refused_naming_the_tool_message() -> None:
    history = _request(USER, _result("zzz"))
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history)
    assert caught.value.location == "messages[1]"
    assert "must be a response to a preceeding message" in caught.value.reason


def test_interleaved_text_breaks_pairing() -> None:
    text = Message(role="assistant", parts=(TextPart(text="hm"),))
    history = _request(USER, Message(role="assistant", parts=(CALL_A,)), text, _result("a"))
    with pytest.raises(LossyHistoryError):
        encode_request(history)


def test_several_results_in_one_message_become_one_tool_message_each() -> None:
    both = Message(role="tool", parts=(ToolResultPart(call_id="b"), ToolResultPart(call_id="a")))
    encoded = encode_request(
        _request(USER, Message(role="assistant", parts=(CALL_A, CALL_B)), both)
    )
    wire = encoded.payload["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool"]  # type: ignore[index, union-attr]
    assert [m.get("tool_call_id") for m in wire] == [None, None, "b", "a"]  # type: ignore[union-attr]


def test_trap20_json_results_are_serialized_and_media_refused_or_dropped() -> None:
    image = MediaPart(media_type="image/png", data="iVBO")
    history = _request(
        USER,
        Message(role="assistant", parts=(CALL_A,)),
        _result("a", TextPart(text="t="), JsonPart(value={"temp": 15}), image),
    )
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history)
    assert caught.value.location == "messages[2].parts[0].output[2]"
    degraded = encode_request(history, policy=ReplayPolicy(mode="degrade"))
    assert degraded.payload["messages"][2]["content"] == 't={"temp":15}'  # type: ignore[index]
    assert [w.code for w in degraded.warnings] == ["tool_result_media"]


def test_approval_control_parts_are_never_sent() -> None:
    approval = ApprovalRequestPart(approval_id="ap1", call=CALL_A)
    decision = ApprovalResponsePart(approval_id="ap1", approved=True)
    history = _request(
        USER,
        Message(role="assistant", parts=(CALL_A, approval)),
        Message(role="user", parts=(decision,)),
        _result("a", TextPart(text="done")),
    )
    encoded = encode_request(history)
    assert [m["role"] for m in encoded.payload["messages"]] == ["user", "assistant", "tool"]  # type: ignore[index, union-attr]
    assert encoded.warnings == ()
    assert "approval" not in str(encoded.payload)


def test_hosted_items_have_no_chat_form() -> None:
    item = HostedToolPart(provider="openai", item_type="mcp_call", item={"type": "mcp_call"})
    history = _request(USER, Message(role="assistant", parts=(item, TextPart(text="ok"))))
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history)
    assert caught.value.location == "messages[1].parts[0]"
    hosted = Request(
        model="m",
        messages=(USER,),
        hosted_tools=(HostedToolSpec(provider="openai", spec={"type": "web_search"}),),
    )
    with pytest.raises(LossyHistoryError):
        encode_request(hosted)
    degraded = encode_request(history, policy=ReplayPolicy(mode="degrade"))
    assert degraded.payload["messages"][1] == {"role": "assistant", "content": "ok"}  # type: ignore[index]


HOSTED_CALL = ToolCallPart(
    call_id="mcpr_1",
    name="ask_question",
    arguments='{"q":"x"}',
    owner="hosted",
    server_label="deepwiki",
)
LISTING = HostedToolPart(
    provider="openai", item_type="mcp_list_tools", item={"type": "mcp_list_tools"}
)


def _hosted_approval_history() -> Request:
    return _request(
        USER,
        Message(
            role="assistant",
            parts=(LISTING, ApprovalRequestPart(approval_id="mcpr_1", call=HOSTED_CALL)),
        ),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="mcpr_1", approved=True),)),
    )


def test_hosted_approvals_are_refused_in_strict_mode() -> None:
    """A hosted MCP approval (and its decision) is model history, never silently dropped."""
    approval_only = _request(
        USER,
        Message(
            role="assistant",
            parts=(
                TextPart(text="checking"),
                ApprovalRequestPart(approval_id="mcpr_1", call=HOSTED_CALL),
            ),
        ),
    )
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(approval_only)
    assert caught.value.location == "messages[1].parts[1]"
    assert caught.value.code == "hosted_approval_unsupported"
    decision_only = _request(
        USER,
        Message(role="assistant", parts=(ApprovalRequestPart(approval_id="ap", call=HOSTED_CALL),)),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="ap", approved=False),)),
    )
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(decision_only)
    assert caught.value.location == "messages[1].parts[0]"
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(_hosted_approval_history())
    assert caught.value.location == "messages[1].parts[0]"  # the first part Chat cannot carry


def test_hosted_approvals_are_dropped_with_warnings_in_degrade_mode() -> None:
    encoded = encode_request(_hosted_approval_history(), policy=ReplayPolicy(mode="degrade"))
    warned = {(w.code, w.location) for w in encoded.warnings}
    assert warned == {
        ("part_unsupported", "messages[1].parts[0]"),
        ("hosted_approval_unsupported", "messages[1].parts[1]"),
        ("hosted_approval_unsupported", "messages[2].parts[0]"),
    }
    # Nothing else of those messages could be sent: no empty assistant turn is invented.
    assert encoded.payload["messages"] == [{"role": "user", "content": "go"}]


def test_a_decision_answering_no_request_is_reported() -> None:
    history = _request(
        USER, Message(role="user", parts=(ApprovalResponsePart(approval_id="x", approved=True),))
    )
    encoded = encode_request(history)
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("approval_dropped", "messages[1].parts[0]")
    ]


def test_media_in_user_and_system_messages() -> None:
    image = MediaPart(media_type="image/jpeg", data="/9j/")
    remote = MediaPart(media_type="video/mp4", uri="gs://bucket/clip.mp4")
    user = Message(role="user", parts=(TextPart(text="look"), image))
    encoded = encode_request(_request(user))
    assert encoded.payload["messages"][0]["content"][1] == {  # type: ignore[index]
        "type": "image_url",
        "image_url": {"url": "data:image/jpeg;base64,/9j/"},
    }
    with pytest.raises(LossyHistoryError):
        encode_request(_request(Message(role="user", parts=(remote,))))
    with pytest.raises(LossyHistoryError):
        encode_request(_request(Message(role="system", parts=(image,)), USER))


def test_deprecated_function_messages_are_converted_explicitly() -> None:
    payload = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": "{}"},
            },
            {"role": "function", "name": "f", "content": "42"},
        ],
    }
    request = decode_request(payload)
    call = request.messages[1].tool_calls[0]
    result = request.messages[2].tool_results[0]
    assert (call.call_id, result.call_id, result.name) == ("call_fn_1", "call_fn_1", "f")
    encoded = encode_request(request)
    assert encoded.payload["messages"][1]["tool_calls"] == [  # type: ignore[index]
        {"id": "call_fn_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]
    assert encoded.payload["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_fn_1",
        "content": "42",
    }  # type: ignore[index]
    assert [w.code for w in encoded.warnings] == ["deprecated_function_converted"] * 2


def test_several_text_parts_keep_their_boundaries_as_a_list() -> None:
    parts = (TextPart(text="a"), TextPart(text="b"))
    encoded = encode_request(_request(USER, Message(role="assistant", parts=parts)))
    assert encoded.payload["messages"][1]["content"] == [  # type: ignore[index]
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]


def test_refusals_round_trip_in_both_places() -> None:
    payload = {
        "model": "m",
        "messages": [
            {"role": "assistant", "content": None, "refusal": "No."},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "x"}, {"type": "refusal", "refusal": "No."}],
            },
        ],
    }
    request = decode_request(payload)
    assert [p.kind for p in request.messages[0].parts] == ["refusal"]
    assert encode_request(request).payload == payload


REFUSAL = RefusalPart(text="I can't help with that.")


@pytest.mark.parametrize("dialect", [None, *REASONING_DIALECTS])
def test_a_refusal_survives_its_own_round_trips(dialect: ReasoningDialect | None) -> None:
    """Conformance finding: a refusal (content null) must never come back as text."""
    refused = Message(role="assistant", parts=(REFUSAL,))
    request = encode_request(_request(USER, refused), reasoning_dialect=dialect).payload
    assert request["messages"][1] == {  # type: ignore[index]
        "role": "assistant",
        "content": None,
        "refusal": "I can't help with that.",
    }
    assert decode_request(request).messages[1].parts == (REFUSAL,)
    response = Response(message=refused, finish_reason="stop")
    body = encode_response(response, reasoning_dialect=dialect)
    assert decode_response(body).message.parts == (REFUSAL,)
    encoder = StreamEncoder(reasoning_dialect=dialect)
    events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
    events += encoder.finish()
    decoder = StreamDecoder()
    folded = fold_updates([u for e in events for u in decoder.feed(e)] + decoder.finish())
    assert folded.message.parts == (REFUSAL,)
    # What the official SDK accumulates from that stream, replayed as history.
    state = ChatCompletionStreamState()
    for event in events[:-1]:
        state.handle_chunk(ChatCompletionChunk.model_validate_json(event.data))
    accumulated = state.get_final_completion().choices[0].message
    replayed = accumulated.model_dump(exclude_none=True, exclude={"parsed"})
    assert replayed == {"role": "assistant", "content": "", "refusal": "I can't help with that."}
    assert decode_request({"model": "m", "messages": [replayed]}).messages[0].parts == (REFUSAL,)


def test_an_empty_content_next_to_a_refusal_is_layout_not_text() -> None:
    payload = {
        "model": "m",
        "messages": [{"role": "assistant", "content": "", "refusal": "No."}],
    }
    request = decode_request(payload)
    assert request.messages[0].parts == (RefusalPart(text="No."),)
    assert encode_request(request).payload == payload
