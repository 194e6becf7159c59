"""Decoding RunAgentInput: the golden mapping and clear errors for bad input."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from interlock.codecs.agui import SealError, decode_run_input, seal
from interlock.transcript import DecodeError, JsonObject, JsonValue, Opaque, to_json

FIXTURES = Path(__file__).parent / "fixtures"
KEY = b"test-seal-key-0123456789abcdef!!"


def load(name: str) -> JsonObject:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def base(**fields: JsonValue) -> JsonObject:
    return {"threadId": "t1", "runId": "r1", "messages": [], **fields}


def test_every_message_kind_maps_to_the_golden_transcript() -> None:
    decoded = decode_run_input(load("run_input_full.json"), seal_key=KEY, tenant="acme")
    assert to_json(decoded) == load("run_input_full.expected.json")


def test_the_official_client_body_decodes() -> None:
    body = {
        "threadId": "thread-1",
        "runId": "8e29926a-a026-461a-b87e-587eab505917",
        "protocolVersion": "1.0",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "hello"}],
        "tools": [{"name": "confirm", "description": "d", "parameters": {"type": "object"}}],
        "context": [],
        "forwardedProps": {},
    }
    decoded = decode_run_input(body)
    assert decoded.messages[0].text == "hello"
    assert decoded.tools[0].owner == "client"
    assert decoded.state == {} and decoded.forwarded_props == {}


def test_absent_optional_fields_decode_to_empty_defaults() -> None:
    decoded = decode_run_input(base())
    assert (decoded.tools, decoded.resume, decoded.context) == ((), (), ())
    assert decoded.state is None and decoded.forwarded_props is None


@dataclass(frozen=True)
class Bad:
    id: str
    payload: JsonValue
    path: str


def _user(**fields: JsonValue) -> JsonObject:
    return {"id": "u", "role": "user", "content": "x", **fields}


BAD = [
    Bad("not-an-object", [], ""),
    Bad("missing-run-id", {"threadId": "t", "messages": []}, "runId"),
    Bad("missing-messages", {"threadId": "t", "runId": "r"}, "messages"),
    Bad(
        "unknown-role", base(messages=[{"id": "x", "role": "robot", "content": "x"}]), "messages[0]"
    ),
    Bad(
        "user-without-content", base(messages=[{"id": "x", "role": "user"}]), "messages[0].content"
    ),
    Bad(
        "tool-without-call-id",
        base(messages=[{"id": "x", "role": "tool", "content": "x"}]),
        "messages[0].toolCallId",
    ),
    Bad(
        "data-source-without-mime",
        base(
            messages=[_user(content=[{"type": "image", "source": {"type": "data", "value": "AA"}}])]
        ),
        "messages[0].content[0].source.mimeType",
    ),
    Bad("float-timestamp-like-wrong-type", base(threadId=5), "threadId"),
    Bad(
        "encrypted-value-on-user",
        base(messages=[_user(encryptedValue="ilk1.x.y")]),
        "messages[0].encryptedValue",
    ),
    Bad(
        "duplicate-tools",
        base(tools=[{"name": "a", "description": "d"}, {"name": "a", "description": "e"}]),
        "tools[1].name",
    ),
    Bad(
        "tool-parameters-not-object",
        base(tools=[{"name": "a", "description": "d", "parameters": [1]}]),
        "tools[0].parameters",
    ),
    Bad(
        "duplicate-resume",
        base(
            resume=[
                {"interruptId": "approval:a", "status": "cancelled"},
                {"interruptId": "approval:a", "status": "cancelled"},
            ]
        ),
        "resume[1].interruptId",
    ),
    Bad(
        "foreign-interrupt-id",
        base(resume=[{"interruptId": "call_1", "status": "resolved", "payload": {}}]),
        "resume[0].interruptId",
    ),
    Bad(
        "bad-resume-status",
        base(resume=[{"interruptId": "approval:a", "status": "maybe"}]),
        "resume[0].status",
    ),
    Bad(
        "approval-payload-not-object",
        base(resume=[{"interruptId": "approval:a", "status": "resolved", "payload": "yes"}]),
        "resume[0].payload",
    ),
    Bad(
        "approval-payload-missing",
        base(resume=[{"interruptId": "approval:a", "status": "resolved"}]),
        "resume[0].payload",
    ),
    Bad(
        "approved-not-bool",
        base(
            resume=[
                {"interruptId": "approval:a", "status": "resolved", "payload": {"approved": "y"}}
            ]
        ),
        "resume[0].payload.approved",
    ),
    Bad(
        "legacy-accepted-key",
        base(
            resume=[
                {"interruptId": "approval:a", "status": "resolved", "payload": {"accepted": True}}
            ]
        ),
        "resume[0].payload.accepted",
    ),
    Bad(
        "edited-args-not-object",
        base(
            resume=[
                {
                    "interruptId": "approval:a",
                    "status": "resolved",
                    "payload": {"approved": True, "editedArgs": "{}"},
                }
            ]
        ),
        "resume[0].payload.editedArgs",
    ),
    Bad(
        "edits-on-a-rejection",
        base(
            resume=[
                {
                    "interruptId": "approval:a",
                    "status": "resolved",
                    "payload": {"approved": False, "editedArgs": {}},
                }
            ]
        ),
        "resume[0].payload.editedArgs",
    ),
    Bad(
        "confirm-answer-not-json",
        base(
            messages=[
                {"id": "t", "role": "tool", "toolCallId": "confirm_changes:ap1", "content": "ok"}
            ]
        ),
        "messages[0].content",
    ),
    Bad(
        "confirm-answer-without-accepted",
        base(
            messages=[
                {
                    "id": "t",
                    "role": "tool",
                    "toolCallId": "confirm_changes:ap1",
                    "content": '{"approved": true}',
                }
            ]
        ),
        "messages[0].content.accepted",
    ),
    Bad(
        "confirm-call-with-bad-arguments",
        base(
            messages=[
                {
                    "id": "a",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "confirm_changes:ap1",
                            "type": "function",
                            "function": {"name": "confirm_changes", "arguments": "{not json"},
                        }
                    ],
                }
            ]
        ),
        "messages[0].toolCalls[0].function.arguments",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[case.id for case in BAD])
def test_bad_input_names_the_path(case: Bad) -> None:
    with pytest.raises(DecodeError) as raised:
        decode_run_input(case.payload)
    assert raised.value.path == case.path


def _with_sealed_reasoning(value: str) -> JsonObject:
    return base(messages=[{"id": "r", "role": "reasoning", "content": "", "encryptedValue": value}])


SIGNED = seal(Opaque(provider="openai", format="f", data="d"), key=KEY, tenant="acme")


def test_a_tampered_encrypted_value_is_refused_with_its_path() -> None:
    version, payload, tag = SIGNED.split(".")
    tampered = ".".join(
        (version, payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1], tag)
    )
    with pytest.raises(SealError) as raised:
        decode_run_input(_with_sealed_reasoning(tampered), seal_key=KEY, tenant="acme")
    assert raised.value.code == "bad_tag"
    assert raised.value.path == "messages[0].encryptedValue"


def test_a_value_sealed_for_another_tenant_is_refused() -> None:
    with pytest.raises(SealError):
        decode_run_input(_with_sealed_reasoning(SIGNED), seal_key=KEY, tenant="globex")


def test_an_encrypted_value_without_a_configured_key_is_refused() -> None:
    with pytest.raises(SealError) as raised:
        decode_run_input(_with_sealed_reasoning(SIGNED))
    assert raised.value.code == "bad_key"


def test_a_raw_provider_value_is_not_accepted_as_sealed() -> None:
    with pytest.raises(SealError) as raised:
        decode_run_input(_with_sealed_reasoning("gAAAAB-raw-openai"), seal_key=KEY, tenant="acme")
    assert raised.value.code == "malformed"


def test_decoding_does_not_mutate_the_payload() -> None:
    payload = load("run_input_full.json")
    before = copy.deepcopy(payload)
    decode_run_input(payload, seal_key=KEY, tenant="acme")
    assert payload == before
