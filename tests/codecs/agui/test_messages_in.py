"""Inbound message mapping: reasoning joins its step, approvals are found by id, never by shape."""

from __future__ import annotations

import pytest

from interlock.codecs.agui import (
    confirm_changes_call_id,
    decode_run_input,
    seal,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    JsonObject,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

KEY = b"test-seal-key-0123456789abcdef!!"
ENCRYPTED = Opaque(provider="openai", format="openai.responses.encrypted_content", data="enc")


def decode(*messages: JsonObject, tools: list[JsonValue] | None = None) -> tuple[Message, ...]:
    payload: JsonObject = {"threadId": "t", "runId": "r", "messages": list(messages)}
    if tools is not None:
        payload["tools"] = tools
    return decode_run_input(payload, seal_key=KEY, tenant="acme").messages


def test_reasoning_joins_the_assistant_message_that_follows() -> None:
    messages = decode(
        {"id": "r1", "role": "reasoning", "content": "first"},
        {"id": "r2", "role": "reasoning", "content": "second"},
        {"id": "a1", "role": "assistant", "content": "answer"},
    )
    assert len(messages) == 1
    assert messages[0].id == "a1"
    kinds = [part.kind for part in messages[0].parts]
    assert kinds == ["reasoning", "reasoning", "text"]


def test_reasoning_not_followed_by_an_assistant_stands_alone() -> None:
    messages = decode(
        {"id": "r1", "role": "reasoning", "content": "thinking"},
        {"id": "u1", "role": "user", "content": "hi"},
    )
    assert [message.role for message in messages] == ["assistant", "user"]
    assert messages[0].id == "r1"
    assert isinstance(messages[0].parts[0], ReasoningPart)


def test_encrypted_only_reasoning_defaults_to_the_encrypted_kind() -> None:
    (message,) = decode(
        {
            "id": "r1",
            "role": "reasoning",
            "content": "",
            "encryptedValue": seal(ENCRYPTED, key=KEY, tenant="acme"),
        }
    )
    (part,) = message.parts
    assert isinstance(part, ReasoningPart)
    assert part.reasoning_kind == "encrypted" and part.opaque == ENCRYPTED


def test_sealed_attributes_restore_kind_and_item_id() -> None:
    value = seal(ENCRYPTED, key=KEY, tenant="acme", attributes={"kind": "raw", "itemId": "rs_9"})
    (message,) = decode({"id": "r1", "role": "reasoning", "content": "x", "encryptedValue": value})
    part = message.parts[0]
    assert isinstance(part, ReasoningPart)
    assert (part.reasoning_kind, part.item_id) == ("raw", "rs_9")


def test_frontend_tool_calls_are_client_owned() -> None:
    (message,) = decode(
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "ui", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "srv", "arguments": "x"}},
            ],
        },
        tools=[{"name": "ui", "description": "frontend"}],
    )
    owners = [(part.call_id, part.owner) for part in message.tool_calls]
    assert owners == [("c1", "client"), ("c2", "local")]
    assert message.tool_calls[1].arguments == "x"  # kept as text even when not JSON


CONFIRM_ID = confirm_changes_call_id("ap1")
CONFIRM_CALL: JsonObject = {
    "id": "a1",
    "role": "assistant",
    "toolCalls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "delete_file", "arguments": '{"path":"/a"}'},
        },
        {
            "id": CONFIRM_ID,
            "type": "function",
            "function": {
                "name": "confirm_changes",
                "arguments": '{"function_name":"delete_file","function_call_id":"call_1",'
                '"function_arguments":{"path":"/a"}}',
            },
        },
    ],
}


@pytest.mark.parametrize("accepted", [True, False])
def test_confirm_changes_pair_decodes_to_approval_parts(accepted: bool) -> None:
    answer = {
        "id": "t1",
        "role": "tool",
        "toolCallId": CONFIRM_ID,
        "content": '{"accepted": %s}' % ("true" if accepted else "false"),
    }
    assistant, reply = decode(CONFIRM_CALL, answer)
    call, request = assistant.parts
    assert isinstance(call, ToolCallPart) and call.call_id == "call_1"
    assert request == ApprovalRequestPart(
        approval_id="ap1",
        call=ToolCallPart(call_id="call_1", name="delete_file", arguments='{"path":"/a"}'),
    )
    assert reply.role == "user"
    (response,) = reply.parts
    assert isinstance(response, ApprovalResponsePart)
    assert (response.approval_id, response.approved) == ("ap1", accepted)
    assert response.edited_arguments is None


def test_confirm_answer_keeps_the_echoed_payload_for_the_ledger() -> None:
    answer = {
        "id": "t1",
        "role": "tool",
        "toolCallId": CONFIRM_ID,
        "content": '{"accepted": true, "function_call_id": "call_FORGED"}',
    }
    (_, reply) = decode(CONFIRM_CALL, answer)
    response = reply.parts[0]
    assert isinstance(response, ApprovalResponsePart)
    assert response.extra["agui"]["payload"] == {
        "accepted": True,
        "function_call_id": "call_FORGED",
    }


def test_a_tool_that_returns_accepted_is_not_an_approval() -> None:
    """Agent-framework classified any {"accepted": …} tool message as an approval (lesson 4)."""
    (_, reply) = decode(
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "submit", "arguments": "{}"}}
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": '{"accepted": true}'},
    )
    (result,) = reply.parts
    assert isinstance(result, ToolResultPart)
    assert result.text == '{"accepted": true}'


def test_tool_content_parts_become_output_parts() -> None:
    (reply,) = decode(
        {
            "id": "t1",
            "role": "tool",
            "toolCallId": "c1",
            "content": [
                {"type": "text", "text": "chart:"},
                {"type": "image", "source": {"type": "url", "value": "https://x/c.png"}},
            ],
        }
    )
    (result,) = reply.parts
    assert isinstance(result, ToolResultPart)
    assert isinstance(result.output[0], TextPart)
    assert isinstance(result.output[1], MediaPart) and result.output[1].uri == "https://x/c.png"


def test_activity_messages_are_ui_only_and_skipped() -> None:
    messages = decode(
        {"id": "x", "role": "activity", "activityType": "PLAN", "content": {}},
        {"id": "u", "role": "user", "content": "hi"},
    )
    assert [message.id for message in messages] == ["u"]


def test_assistant_signature_lands_on_its_text() -> None:
    signature = Opaque(provider="google", format="gemini.thought_signature", data="sig")
    (message,) = decode(
        {
            "id": "a",
            "role": "assistant",
            "content": "done",
            "encryptedValue": seal(signature, key=KEY, tenant="acme"),
        }
    )
    assert message.parts == (TextPart(text="done", signature=signature),)


def test_assistant_without_content_has_no_empty_text_part() -> None:
    (message,) = decode(
        {
            "id": "a",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        }
    )
    assert [part.kind for part in message.parts] == ["tool_call"]


# ------------------------------------------------------ the codec's metadata labels

SIGNATURE = Opaque(provider="google", format="gemini.thought_signature", data="sig")


def layout(*entries: tuple[str, int]) -> JsonObject:
    return {"interlock": {"content": [{"type": kind, "length": n} for kind, n in entries]}}


def test_a_layout_splits_content_back_into_text_and_refusal_parts() -> None:
    (message,) = decode(
        {
            "id": "a",
            "role": "assistant",
            "content": "Sure. Not that.",
            "metadata": layout(("text", 6), ("refusal", 9)),
        }
    )
    assert message.parts == (TextPart(text="Sure. "), RefusalPart(text="Not that."))
    assert message.extra == {}


def test_a_streamed_signature_belongs_to_the_layouts_last_part() -> None:
    """What the client holds after a step whose last text part was signed."""
    (message,) = decode(
        {
            "id": "a",
            "role": "assistant",
            "content": "ab",
            "metadata": layout(("text", 1), ("text", 1)),
            "encryptedValue": seal(SIGNATURE, key=KEY, tenant="acme"),
        }
    )
    assert message.parts == (TextPart(text="a"), TextPart(text="b", signature=SIGNATURE))


def test_a_signature_cannot_land_on_a_refusal() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(
            {
                "id": "a",
                "role": "assistant",
                "content": "no",
                "metadata": layout(("refusal", 2)),
                "encryptedValue": seal(SIGNATURE, key=KEY, tenant="acme"),
            }
        )
    assert caught.value.path == "messages[0].encryptedValue"


def test_a_bad_layout_names_its_message() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(
            {"id": "u", "role": "user", "content": "hi"},
            {"id": "a", "role": "assistant", "content": "abc", "metadata": layout(("text", 2))},
        )
    assert caught.value.path == "messages[1].metadata.interlock.content"


def test_the_clients_own_metadata_is_kept_and_the_labels_are_not() -> None:
    (message,) = decode(
        {
            "id": "r",
            "role": "reasoning",
            "content": "thinking",
            "metadata": {"trace": "t-1", "interlock": {"reasoningKind": "raw"}},
        }
    )
    (part,) = message.parts
    assert isinstance(part, ReasoningPart) and part.reasoning_kind == "raw"
    assert part.extra == {"agui": {"messageId": "r", "metadata": {"trace": "t-1"}}}


def test_a_sealed_value_outranks_the_reasoning_labels() -> None:
    value = seal(ENCRYPTED, key=KEY, tenant="acme", attributes={"kind": "summary"})
    (message,) = decode(
        {
            "id": "r",
            "role": "reasoning",
            "content": "s",
            "encryptedValue": value,
            "metadata": {"interlock": {"reasoningKind": "raw", "itemId": "forged"}},
        }
    )
    (part,) = message.parts
    assert isinstance(part, ReasoningPart)
    assert (part.reasoning_kind, part.item_id) == ("summary", None)


def test_a_hosted_label_restores_the_owner_of_a_call() -> None:
    (message,) = decode(
        {
            "id": "a",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "mcp_1",
                    "type": "function",
                    "function": {"name": "ask", "arguments": "{}"},
                    "metadata": {"interlock": {"owner": "hosted", "serverLabel": "wiki"}},
                }
            ],
        }
    )
    (call,) = message.tool_calls
    assert (call.owner, call.server_label, call.extra) == ("hosted", "wiki", {})
