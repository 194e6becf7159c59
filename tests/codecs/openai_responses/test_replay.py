"""Replay rules of ``encode_request`` (provider-wire §1.5–§1.6 and the Responses traps)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from openai.types.responses.easy_input_message_param import EasyInputMessageParam
from pydantic import ConfigDict, TypeAdapter

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_responses import (
    DIALECT,
    ENCRYPTED_FORMAT,
    StreamDecoder,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from interlock.transcript import (
    UNKNOWN_ISSUER,
    ApprovalRequestPart,
    ApprovalResponsePart,
    Continuation,
    HostedToolPart,
    InputRequestPart,
    JsonPart,
    LossyHistoryError,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

OWN = Opaque(provider="openai", format=ENCRYPTED_FORMAT, data="gAAAA-blob")
GEMINI = Opaque(provider="google", format="gemini.thought_signature", data="CrICAd")
ROUTER = Opaque(
    provider="openrouter",
    format="openrouter.reasoning_detail",
    data={"type": "reasoning.encrypted"},
)
STATELESS = Continuation(store=False)


def history(step: tuple[Part, ...], continuation: Continuation = STATELESS) -> Request:
    """user → assistant step → tool result for ``call_1``."""
    return Request(
        model="gpt-5.5",
        messages=(
            Message(role="user", parts=(TextPart(text="Weather?"),)),
            Message(role="assistant", parts=step),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id="call_1", output=(TextPart(text="15"),)),),
            ),
        ),
        continuation=continuation,
    )


CALL = ToolCallPart(call_id="call_1", name="get_weather", arguments="{}", item_id="fc_1")


def test_stateless_replay_keeps_encrypted_reasoning_before_its_call_and_requests_include() -> None:
    step = (
        ReasoningPart(reasoning_kind="summary", text="s", item_id="rs_1"),
        ReasoningPart(reasoning_kind="encrypted", opaque=OWN, item_id="rs_1"),
        CALL,
    )
    encoded = encode_request(history(step))
    items = encoded.payload["input"]
    assert [item["type"] for item in items[1:]] == [
        "reasoning",
        "function_call",
        "function_call_output",
    ]  # type: ignore[index]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "s"}],
        "encrypted_content": "gAAAA-blob",
    }  # type: ignore[index]
    assert items[2]["id"] == "fc_1"  # type: ignore[index]
    assert encoded.payload["include"] == ["reasoning.encrypted_content"]
    assert encoded.warnings == ()


def test_trap3_empty_summary_with_encrypted_content_is_replayed() -> None:
    step = (ReasoningPart(reasoning_kind="encrypted", opaque=OWN, item_id="rs_1"), CALL)
    items = encode_request(history(step)).payload["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": "gAAAA-blob",
    }  # type: ignore[index]


@pytest.mark.parametrize(
    "reasoning",
    [
        ReasoningPart(reasoning_kind="summary", text="only a summary", item_id="rs_1"),
        ReasoningPart(reasoning_kind="encrypted", item_id="rs_1"),
        ReasoningPart(reasoning_kind="summary", text="gemini thought", opaque=GEMINI),
    ],
)
def test_stateless_reasoning_bound_to_a_call_without_encrypted_content_is_refused(
    reasoning: ReasoningPart,
) -> None:
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history((reasoning, CALL)))
    assert caught.value.location == "messages[1].parts[0]"


def test_degrade_mode_drops_the_reasoning_with_the_steps_ids_and_warns() -> None:
    step = (ReasoningPart(reasoning_kind="summary", text="s", item_id="rs_1"), CALL)
    encoded = encode_request(history(step), policy=ReplayPolicy(mode="degrade"))
    items = encoded.payload["input"]
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "{}",
    }  # type: ignore[index]
    assert [w.code for w in encoded.warnings] == ["reasoning_not_replayable"]
    assert encoded.warnings[0].location == "messages[1].parts[0]"


def test_stateless_reasoning_without_a_call_is_dropped_with_a_warning_even_in_strict_mode() -> None:
    step = (
        ReasoningPart(reasoning_kind="summary", text="s", item_id="rs_1"),
        TextPart(text="hi", item_id="msg_1"),
    )
    request = Request(
        model="m", messages=(Message(role="assistant", parts=step),), continuation=STATELESS
    )
    encoded = encode_request(request)
    assert encoded.payload["input"] == [{"type": "message", "role": "assistant", "content": "hi"}]
    assert [w.code for w in encoded.warnings] == ["reasoning_dropped"]


def test_stateless_step_without_reasoning_is_sent_without_ids() -> None:
    """§1.5: with ``store=false`` ids cannot be looked up; all ids or none per step."""
    step = (TextPart(text="hi", item_id="msg_1"), CALL)
    encoded = encode_request(history(step))
    assert all("id" not in item for item in encoded.payload["input"])  # type: ignore[union-attr]
    assert [w.code for w in encoded.warnings] == ["item_ids_stripped"]


def test_stored_history_strips_all_step_ids_when_reasoning_cannot_be_referenced() -> None:
    """Trap 18: never a ``fc_`` id without the ``rs_`` item it requires."""
    step = (ReasoningPart(reasoning_kind="summary", text="foreign", opaque=GEMINI), CALL)
    encoded = encode_request(history(step, Continuation()), policy=ReplayPolicy(mode="degrade"))
    items = encoded.payload["input"]
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "{}",
    }  # type: ignore[index]
    assert [w.code for w in encoded.warnings] == ["opaque_dropped", "reasoning_not_replayable"]


@pytest.mark.parametrize("continuation", [Continuation(), STATELESS], ids=["stored", "stateless"])
def test_a_current_step_without_its_reasoning_is_refused_in_either_regime(
    continuation: Continuation,
) -> None:
    """Issue 11: strict refuses what the current step needs, whether or not the service
    stores state: reasoning it can neither reference nor replay (here another provider's,
    after a switch inside the tool step) is refused in both regimes, warned about in
    degrade mode, and dropped quietly in neither."""
    step = (ReasoningPart(reasoning_kind="summary", text="foreign", opaque=GEMINI), CALL)
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history(step, continuation))
    assert caught.value.code == "reasoning_not_replayable"
    assert "current turn" in caught.value.reason
    degraded = encode_request(history(step, continuation), policy=ReplayPolicy(mode="degrade"))
    assert "reasoning_not_replayable" in [w.code for w in degraded.warnings]


def test_stored_history_replays_reasoning_by_id_only() -> None:
    step = (ReasoningPart(reasoning_kind="encrypted", item_id="rs_1"), CALL)
    items = encode_request(history(step, Continuation())).payload["input"]
    assert items[1] == {"type": "reasoning", "id": "rs_1", "summary": []}  # type: ignore[index]
    assert "include" not in encode_request(history(step, Continuation())).payload


@pytest.mark.parametrize("opaque", [GEMINI, ROUTER])
def test_foreign_opaque_is_dropped_with_a_warning_or_refused(opaque: Opaque) -> None:
    step = (
        ReasoningPart(reasoning_kind="encrypted", opaque=opaque),
        TextPart(text="x", signature=GEMINI),
    )
    request = Request(model="m", messages=(Message(role="assistant", parts=step),))
    encoded = encode_request(request)
    assert encoded.payload["input"] == [{"type": "message", "role": "assistant", "content": "x"}]
    assert {w.code for w in encoded.warnings} == {"opaque_dropped", "reasoning_dropped"}
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(request, policy=ReplayPolicy(foreign_opaque="refuse"))
    assert caught.value.location == "messages[0].parts[0]"


def test_trap17_foreign_blob_labelled_openai_but_other_format_is_not_replayed() -> None:
    fake = Opaque(provider="openai", format="anthropic.thinking", data="sig")
    step = (ReasoningPart(reasoning_kind="encrypted", opaque=fake, item_id="rs_1"), CALL)
    with pytest.raises(LossyHistoryError):
        encode_request(history(step))


def test_trap28_assistant_text_is_output_text_and_trap27_phase_is_preserved() -> None:
    payload = {
        "model": "m",
        "input": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "phase": "commentary",
                "content": [{"type": "input_text", "text": "wrongly typed"}],
            }
        ],
    }
    encoded = encode_request(decode_request(payload)).payload  # type: ignore[arg-type]
    item = encoded["input"][0]  # type: ignore[index]
    assert item["content"] == [{"type": "output_text", "text": "wrongly typed", "annotations": []}]
    assert item["phase"] == "commentary"
    canonical = Request(
        model="m",
        messages=(Message(role="assistant", parts=(TextPart(text="a", item_id="msg_2"),)),),
    )
    content = encode_request(canonical).payload["input"][0]["content"]  # type: ignore[index]
    assert content == [{"type": "output_text", "text": "a", "annotations": []}]


EASY_MESSAGES = TypeAdapter(list[EasyInputMessageParam], config=ConfigDict(extra="forbid"))


def test_an_id_less_refusal_is_sent_as_text_with_a_warning() -> None:
    """No server id may be minted, and id-less output parts are not an SDK shape (trap 35)."""
    request = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="Help?"),)),
            Message(role="assistant", parts=(TextPart(text="Well,"), RefusalPart(text="no."))),
        ),
    )
    encoded = encode_request(request)
    items = encoded.payload["input"][1:]  # type: ignore[index]
    assert items == [
        {"role": "assistant", "content": "Well,", "type": "message"},
        {"role": "assistant", "content": "no.", "type": "message"},
    ]
    EASY_MESSAGES.validate_python(items)
    [warning] = encoded.warnings
    assert (warning.code, warning.location) == ("refusal_as_text", "messages[1].parts[1]")


def test_a_stateless_step_stripped_of_its_ids_keeps_phase_on_every_split_message() -> None:
    step = (
        TextPart(text="one", item_id="msg_1", extra={DIALECT: {"~item": {"phase": "commentary"}}}),
        RefusalPart(text="two", item_id="msg_1"),
    )
    encoded = encode_request(
        Request(
            model="m", messages=(Message(role="assistant", parts=step),), continuation=STATELESS
        )
    )
    assert encoded.payload["input"] == [
        {"role": "assistant", "content": text, "type": "message", "phase": "commentary"}
        for text in ("one", "two")
    ]
    assert [w.code for w in encoded.warnings] == ["item_ids_stripped", "refusal_as_text"]


def test_id_less_list_content_from_the_wire_is_sent_as_it_came() -> None:
    """Codex sends assistant output parts without an id; the service accepts it."""
    content = [
        {"type": "output_text", "text": "a", "annotations": []},
        {"type": "output_text", "text": "b", "annotations": []},
    ]
    payload = {
        "model": "m",
        "input": [{"type": "message", "role": "assistant", "content": content}],
    }
    assert encode_request(decode_request(payload)).payload == payload  # type: ignore[arg-type]


PDF_BY_URL = MediaPart(media_type="application/pdf", uri="https://example.com/doc.pdf")


def test_a_media_references_type_has_no_field_and_is_dropped_with_a_warning() -> None:
    """Gemini ``fileData`` carries a mimeType; ``input_file.file_url`` has nowhere to put it."""
    inline = MediaPart(media_type="image/png", data="AAAA")
    request = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="Read"), inline, PDF_BY_URL)),
            Message(role="assistant", parts=(CALL,)),
            Message(role="tool", parts=(ToolResultPart(call_id="call_1", output=(PDF_BY_URL,)),)),
        ),
    )
    encoded = encode_request(request)
    user = encoded.payload["input"][0]  # type: ignore[index]
    assert user["content"][2] == {"type": "input_file", "file_url": "https://example.com/doc.pdf"}  # type: ignore[index]
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("media_type_dropped", "messages[0].parts[2]"),
        ("media_type_dropped", "messages[2].parts[0].output[0]"),
    ]


@pytest.mark.parametrize("part", [PDF_BY_URL, JsonPart(value={"k": 1})], ids=["media", "json"])
def test_assistant_media_or_json_is_refused_or_dropped_with_a_warning(part: Part) -> None:
    """Assistant content is output_text/refusal only; such a part is never dropped silently."""
    request = history((TextPart(text="Here:"), part, CALL), Continuation())
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(request)
    assert caught.value.location == "messages[1].parts[1]"
    encoded = encode_request(request, policy=ReplayPolicy(mode="degrade"))
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("part_not_carried", "messages[1].parts[1]")
    ]
    assert len(encoded.payload["input"]) == 4  # type: ignore[arg-type]


def test_trap33_item_reference_cannot_be_sent_stateless() -> None:
    reference = HostedToolPart(
        provider="openai",
        item_type="item_reference",
        item={"type": "item_reference", "id": "msg_0"},
    )
    request = Request(
        model="m", messages=(Message(role="assistant", parts=(reference,)),), continuation=STATELESS
    )
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(request, policy=ReplayPolicy(mode="degrade"))
    assert caught.value.code == "item_reference_unresolvable"
    stored = Request(model="m", messages=(Message(role="assistant", parts=(reference,)),))
    assert encode_request(stored).payload["input"] == [{"type": "item_reference", "id": "msg_0"}]


def test_continuation_sends_only_items_after_the_last_model_output() -> None:
    approval = ApprovalRequestPart(
        approval_id="mcpr_1",
        call=ToolCallPart(
            call_id="mcpr_1",
            name="ask",
            arguments="{}",
            owner="hosted",
            server_label="wiki",
            item_id="mcpr_1",
        ),
    )
    decision = ApprovalResponsePart(approval_id="mcpr_1", approved=True)
    messages = (
        Message(
            role="system",
            parts=(TextPart(text="Be brief."),),
            extra={"openai-responses": {"~instructions": True}},
        ),
        Message(role="user", parts=(TextPart(text="hi"),)),
        Message(
            role="assistant",
            parts=(ReasoningPart(reasoning_kind="encrypted", item_id="rs_1"), approval),
        ),
        Message(role="user", parts=(decision, decision)),
    )
    request = Request(
        model="m", messages=messages, continuation=Continuation(previous_response_id="resp_1")
    )
    payload = encode_request(request).payload
    assert payload["instructions"] == "Be brief."  # instructions are not carried over (trap 29)
    assert payload["input"] == [
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    ]
    assert payload["previous_response_id"] == "resp_1"


def test_local_control_parts_are_never_sent() -> None:
    local = ApprovalRequestPart(
        approval_id="a1", call=ToolCallPart(call_id="c", name="rm", arguments="{}")
    )
    messages = (
        Message(role="assistant", parts=(local,)),
        Message(
            role="user",
            parts=(
                ApprovalResponsePart(approval_id="a1", approved=True),
                InputRequestPart(request_id="r", occurrence_id="o", call_id="c", prompt="?"),
            ),
        ),
        Message(role="user", parts=(TextPart(text="go"),)),
    )
    payload = encode_request(Request(model="m", messages=messages)).payload
    assert payload["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    ]


def test_hosted_approval_items_travel_both_ways_in_a_full_history() -> None:
    payload = {
        "model": "m",
        "input": [
            {
                "type": "mcp_approval_request",
                "id": "mcpr_1",
                "server_label": "s",
                "name": "n",
                "arguments": "{}",
            },
            {
                "type": "mcp_approval_response",
                "approval_request_id": "mcpr_1",
                "approve": False,
                "reason": "no",
            },
        ],
    }
    assert encode_request(decode_request(payload)).payload == payload  # type: ignore[arg-type]


def test_trap30_a_participant_name_is_never_dropped_silently() -> None:
    named = Message(role="user", name="alice", parts=(TextPart(text="hi"),))
    encoded = encode_request(Request(model="gpt-5", messages=(named,)))
    assert [(w.code, w.location) for w in encoded.warnings] == [("name_dropped", "messages[0]")]


def _finished_turn(step: tuple[Part, ...]) -> Request:
    """``history(step)`` answered, then a new user question: the step's turn is over."""
    earlier = history(step)
    answer = Message(role="assistant", parts=(TextPart(text="15 degrees"),))
    question = Message(role="user", parts=(TextPart(text="And tomorrow?"),))
    return Request(
        model="gpt-5.5",
        messages=(*earlier.messages, answer, question),
        continuation=STATELESS,
    )


@pytest.mark.parametrize("opaque", [GEMINI, ROUTER, None])
def test_foreign_reasoning_of_a_finished_turn_is_dropped_not_refused(opaque: Opaque | None) -> None:
    """Issue 11: only the current turn's tool step needs its own reasoning (§1.5: earlier
    turns' reasoning is not rendered to the model), so an earlier step whose reasoning came
    from another provider goes without it, and without ids, even in strict mode."""
    step = (ReasoningPart(reasoning_kind="summary", text="thought", opaque=opaque), CALL)
    encoded = encode_request(_finished_turn(step), policy=ReplayPolicy(mode="strict"))
    items = encoded.payload["input"]
    assert [item.get("type", "message") for item in items] == [  # type: ignore[union-attr]
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
    ]
    assert "id" not in items[1]  # type: ignore[operator]
    codes = [w.code for w in encoded.warnings]
    assert codes[-1] == "reasoning_dropped" and "reasoning_not_replayable" not in codes
    assert encoded.warnings[-1].location == "messages[1].parts[0]"


def test_the_same_step_in_the_current_turn_is_still_refused() -> None:
    step = (ReasoningPart(reasoning_kind="summary", text="thought", opaque=GEMINI), CALL)
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(history(step), policy=ReplayPolicy(mode="strict"))
    assert caught.value.code == "reasoning_not_replayable"
    assert caught.value.location == "messages[1].parts[0]"
    assert "current turn" in str(caught.value)


def test_ids_this_codec_minted_are_never_sent_back_as_item_ids() -> None:
    """Issue 11: a client echoing a translated answer (ids minted here) must not make the
    gateway reference them: the service answers 404 ``Item with id … not found``."""
    body = {
        "model": "gpt-5.5",
        "input": [
            {"role": "user", "content": "Weather?"},
            {
                "type": "reasoning",
                "id": "rs_interlock_chatcmpl-1_0",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "thinking"}],
            },
            {
                "type": "function_call",
                "id": "fc_interlock_chatcmpl-1_1",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{}",
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "15"},
            {
                "type": "message",
                "id": "msg_interlock_chatcmpl-2_0",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "15 degrees", "annotations": []}],
            },
            {"role": "user", "content": "And tomorrow?"},
        ],
    }
    request = decode_request(body)
    assert all(getattr(p, "item_id", None) is None for m in request.messages for p in m.parts)
    for continuation in (Continuation(), STATELESS):
        encoded = encode_request(
            Request(model="gpt-5.5", messages=request.messages, continuation=continuation)
        )
        assert "interlock_" not in str(encoded.payload), continuation
        assert [w.code for w in encoded.warnings] == ["reasoning_dropped"]


def test_each_dropped_reasoning_part_gets_its_own_warning() -> None:
    """Two thought summaries from Gemini on a finished step: both dropped, each named (one
    warning for the first used to leave the second lost without a word)."""
    call = ToolCallPart(call_id="call_1", name="add", arguments="{}")
    step = (
        ReasoningPart(reasoning_kind="summary", text="first thought"),
        ReasoningPart(reasoning_kind="summary", text="second thought"),
        call,
    )
    request = Request(
        model="gpt-5.5",
        messages=(
            Message(role="user", parts=(TextPart(text="add"),)),
            Message(role="assistant", parts=step),
            Message(
                role="tool", parts=(ToolResultPart(call_id="call_1", output=(TextPart(text="3"),)),)
            ),
            Message(role="assistant", parts=(TextPart(text="3"),)),
            Message(role="user", parts=(TextPart(text="again"),)),
        ),
    )
    encoded = encode_request(request)
    dropped = [w.location for w in encoded.warnings if w.code == "reasoning_dropped"]
    assert dropped == ["messages[1].parts[0]", "messages[1].parts[1]"]


def test_under_continuation_a_decision_on_a_stored_request_is_sent_once() -> None:
    """The loop continuing from the response that asked sends the caller's decision alone:
    its request is stored by the service, not in the history; a local decision never goes."""
    local = ApprovalRequestPart(
        approval_id="a1", call=ToolCallPart(call_id="c", name="rm", arguments="{}")
    )
    decisions = Message(
        role="user",
        parts=(
            ApprovalResponsePart(approval_id="mcpr_1", approved=False, reason="no"),
            ApprovalResponsePart(approval_id="mcpr_1", approved=False, reason="no"),
            ApprovalResponsePart(approval_id="a1", approved=True),
        ),
    )
    messages = (Message(role="assistant", parts=(local,)), decisions)
    continued = Request(
        model="m", messages=messages, continuation=Continuation(previous_response_id="resp_1")
    )
    assert encode_request(continued).payload["input"] == [
        {
            "type": "mcp_approval_response",
            "approval_request_id": "mcpr_1",
            "approve": False,
            "reason": "no",
        }
    ]
    for regime in (Continuation(), STATELESS):
        stateless = Request(model="m", messages=messages, continuation=regime)
        assert encode_request(stateless).payload["input"] == [], "no request, no decision"


# ---------------------------------------------------------------- the issuer of a blob

XAI = Opaque(provider="xai", format=ENCRYPTED_FORMAT, data="xai-blob")
UNKNOWN = Opaque(provider=UNKNOWN_ISSUER, format=ENCRYPTED_FORMAT, data="client-blob")


def finished(step: tuple[Part, ...], continuation: Continuation = STATELESS) -> Request:
    """``step`` on a finished turn: a new user message follows its tool result."""
    earlier = history(step, continuation)
    again = Message(role="user", parts=(TextPart(text="And tomorrow?"),))
    return replace(earlier, messages=(*earlier.messages, again))


@pytest.mark.parametrize("continuation", [STATELESS, Continuation()], ids=["stateless", "stored"])
def test_another_vendors_reasoning_on_a_finished_turn_is_dropped_with_its_ids(
    continuation: Continuation,
) -> None:
    """xAI's blob (and the ids of its step, which name xAI's items) never go to OpenAI;
    a finished turn does not need them: dropped with warnings, never refused."""
    step = (ReasoningPart(reasoning_kind="encrypted", opaque=XAI, item_id="rs_x"), CALL)
    encoded = encode_request(finished(step, continuation))
    sent = json.dumps(encoded.payload)
    assert "xai-blob" not in sent and "rs_x" not in sent and "fc_1" not in sent
    assert [w.code for w in encoded.warnings][:2] == ["opaque_dropped", "reasoning_dropped"]
    assert "issued by xai" in encoded.warnings[1].message


def test_another_vendors_reasoning_the_current_step_needs_is_refused_under_strict() -> None:
    step = (ReasoningPart(reasoning_kind="encrypted", opaque=XAI, item_id="rs_x"), CALL)
    with pytest.raises(LossyHistoryError) as refused:
        encode_request(history(step))
    assert refused.value.code == "reasoning_not_replayable"
    degraded = encode_request(history(step), policy=ReplayPolicy(mode="degrade"))
    assert "xai-blob" not in json.dumps(degraded.payload)


@pytest.mark.parametrize("opaque", [XAI, UNKNOWN], ids=["own", "unknown"])
def test_a_vendors_own_and_unrecorded_reasoning_go_to_it_exactly(opaque: Opaque) -> None:
    step = (ReasoningPart(reasoning_kind="encrypted", opaque=opaque, item_id="rs_x"), CALL)
    encoded = encode_request(history(step), issuer="xai")
    assert encoded.payload["input"][1] == {  # type: ignore[index]
        "type": "reasoning",
        "id": "rs_x",
        "summary": [],
        "encrypted_content": opaque.data,
    }
    assert encoded.warnings == ()
    to_openai = encode_request(finished((replace(step[0], opaque=OWN), CALL)), issuer="xai")
    assert "gAAAA-blob" not in json.dumps(to_openai.payload), "OpenAI's does not go to xAI"


def test_decoders_label_encrypted_reasoning_with_their_vendor() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "b"}
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    request = decode_request({"model": "m", "input": [item, call]}, issuer="xai")
    parts = request.messages[0].parts
    assert isinstance(parts[0], ReasoningPart) and parts[0].opaque == replace(XAI, data="b")
    answer = decode_response({"output": [item, call], "status": "completed"}, issuer="xai")
    assert answer.message.parts[0] == parts[0]
    decoder = StreamDecoder(issuer="xai")
    done = {"type": "response.output_item.done", "output_index": 0, "item": item}
    updates = decoder.feed(SseEvent(data=json.dumps(done)))
    assert any(getattr(u, "part", None) == parts[0] for u in updates)
    # An answer for a Responses client carries a blob whoever issued it.
    encoded = encode_response(answer)
    assert encoded["output"][0]["encrypted_content"] == "b"  # type: ignore[index]
