"""Rendering parts as items: parts without extras take a direct path to the default shapes.

The direct path and the generic extra/defaults merge must give the same JSON, key order
included. An ``extra`` that holds only another dialect's fields sends a part down the
generic path while meaning nothing to this codec, so both encodings must be identical.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from interlock.codecs.openai_responses import ENCRYPTED_FORMAT, decode_request, encode_request
from interlock.transcript import (
    Continuation,
    JsonPart,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

FOREIGN = {"gemini": {"thoughtSignature": "x"}}
BLOB = Opaque(provider="openai", format=ENCRYPTED_FORMAT, data="gAAAA-blob")


def _with_foreign_extra(part: Part) -> Part:
    return replace(part, extra=FOREIGN)


def _step(item_ids: bool) -> tuple[Part, ...]:
    def ids(prefix: str) -> str | None:
        return f"{prefix}_1" if item_ids else None

    return (
        ReasoningPart(reasoning_kind="summary", text="plan", item_id=ids("rs")),
        ReasoningPart(reasoning_kind="raw", text="raw", item_id=ids("rs")),
        ReasoningPart(reasoning_kind="encrypted", opaque=BLOB, item_id=ids("rs")),
        TextPart(text="Let me check.", item_id=ids("msg")),
        ToolCallPart(call_id="call_1", name="lookup", arguments='{"q":1}', item_id=ids("fc")),
        TextPart(text="one", item_id=ids("msg2")),
        RefusalPart(text="no", item_id=ids("msg2")),
    )


def _request(
    step: tuple[Part, ...], outputs: tuple[TextPart | JsonPart | MediaPart, ...]
) -> Request:
    user = (
        TextPart(text="hi"),
        MediaPart(media_type="image/png", data="AAAA"),
        JsonPart(value=[1]),
    )
    return Request(
        model="m",
        messages=(
            Message(role="user", parts=user),
            Message(role="assistant", parts=step),
            Message(role="tool", parts=(ToolResultPart(call_id="call_1", output=outputs),)),
        ),
        continuation=Continuation(store=True),
    )


def _encoded(request: Request) -> str:
    return json.dumps(encode_request(request).payload)


def _foreign_everywhere(request: Request) -> Request:
    messages = tuple(
        replace(
            message,
            extra=FOREIGN,
            parts=tuple(_with_foreign_extra(part) for part in message.parts),
        )
        for message in request.messages
    )
    return replace(request, messages=messages)


@pytest.mark.parametrize("item_ids", [True, False], ids=["with-ids", "without-ids"])
@pytest.mark.parametrize(
    "outputs",
    [
        (TextPart(text="result"),),
        (),
        (TextPart(text="a"), JsonPart(value={"k": 1})),
        (MediaPart(media_type="image/png", data="AAAA"),),
    ],
    ids=["text", "empty", "text-and-json", "media"],
)
def test_other_dialects_extras_do_not_change_the_encoding(
    item_ids: bool, outputs: tuple[TextPart | JsonPart | MediaPart, ...]
) -> None:
    request = _request(_step(item_ids), outputs)
    assert _encoded(_foreign_everywhere(request)) == _encoded(request)


def test_hint_free_parts_render_to_the_default_item_shapes() -> None:
    payload = encode_request(_request(_step(True), (TextPart(text="result"),))).payload
    assert payload["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "hi"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,AAAA",
                    "detail": "auto",
                },
                {"type": "input_text", "text": "[1]"},
            ],
            "type": "message",
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "content": [{"type": "reasoning_text", "text": "raw"}],
            "encrypted_content": "gAAAA-blob",
        },
        {
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
            "type": "message",
            "status": "completed",
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": '{"q":1}',
            "status": "completed",
        },
        {
            "id": "msg2_1",
            "role": "assistant",
            "content": [
                {"type": "output_text", "text": "one", "annotations": []},
                {"type": "refusal", "refusal": "no"},
            ],
            "type": "message",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "result"},
    ]


def test_a_lone_text_without_id_is_string_content() -> None:
    step = (TextPart(text="Sure."), ToolCallPart(call_id="call_1", name="f", arguments="{}"))
    items = encode_request(_request(step, ())).payload["input"]
    assert isinstance(items, list)
    assert items[1] == {"role": "assistant", "content": "Sure.", "type": "message"}
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "f",
        "arguments": "{}",
    }


def test_input_messages_carry_an_id_only_where_the_wire_had_one() -> None:
    """AG-UI user/system message ids are not OpenAI items: the SDK input types have no ``id``."""
    request = Request(
        model="m",
        messages=(
            Message(role="system", id="s1", parts=(TextPart(text="Be brief."),)),
            Message(role="user", id="u1", parts=(TextPart(text="hi"),), extra=FOREIGN),
        ),
    )
    items = encode_request(request).payload["input"]
    assert isinstance(items, list)
    assert [sorted(item) for item in items] == [["content", "role", "type"]] * 2  # type: ignore[arg-type]
    wire = {"model": "m", "input": [{"id": "msg_u", "role": "user", "content": "hi"}]}
    decoded = decode_request(wire)
    assert decoded.messages[0].id == "msg_u"
    assert encode_request(decoded).payload == wire
