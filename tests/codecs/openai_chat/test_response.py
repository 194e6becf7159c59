"""Non-streaming responses both ways."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from interlock.codecs.openai_chat import ReasoningDialect, decode_response, encode_response
from interlock.transcript import (
    DecodeError,
    Message,
    Opaque,
    ReasoningPart,
    Response,
    TextPart,
    ToolCallPart,
    Usage,
)
from tests.codecs.openai_chat.fixtures_helpers import DIALECT_FIXTURES, load


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_golden_response_round_trip_is_exact(name: str, dialect: ReasoningDialect) -> None:
    payload = load(f"response_{name}.json")
    original = copy.deepcopy(payload)
    response = decode_response(payload)
    assert encode_response(response) == original
    assert encode_response(response, reasoning_dialect=dialect) == original


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_the_sdk_parses_every_encoded_response(name: str, dialect: ReasoningDialect) -> None:
    response = decode_response(load(f"response_{name}.json"))
    parsed = ChatCompletion.model_validate(encode_response(response, reasoning_dialect=dialect))
    assert parsed.choices[0].finish_reason == "tool_calls" or name == "reasoning"


def test_decoded_response_is_canonical() -> None:
    response = decode_response(load("response_none.json"))
    assert (response.id, response.model, response.created) == (
        "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "gpt-5.5-2026-08-06",
        1741570283,
    )
    assert (response.finish_reason, response.native_finish_reason) == ("tool_calls", "tool_calls")
    assert response.usage is not None
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (246, 192)
    assert response.usage.cached_input_tokens == 1024
    assert [c.call_id for c in response.message.tool_calls] == ["call_A", "call_B"]


def test_trap31_gemini_compat_usage_counts_thinking_outside_completion() -> None:
    usage = decode_response(load("response_gemini_compat.json")).usage
    assert usage is not None
    assert (usage.output_tokens, usage.reasoning_tokens, usage.total_tokens) == (120, 80, 180)


def _reasoned(*parts: Any) -> Response:
    return Response(
        message=Message(role="assistant", parts=(*parts, TextPart(text="answer"))),
        id="r",
        model="m",
        created=1,
        finish_reason="stop",
    )


def test_response_reasoning_per_dialect_never_relabels_a_summary() -> None:
    raw = ReasoningPart(reasoning_kind="raw", text="raw")
    summary = ReasoningPart(reasoning_kind="summary", text="sum")

    def message(d):
        return encode_response(_reasoned(raw, summary), reasoning_dialect=d)["choices"][0][
            "message"
        ]

    assert message("reasoning_content")["reasoning_content"] == "raw"
    assert message("reasoning")["reasoning"] == "raw"
    assert "reasoning_content" not in message("none") and "reasoning" not in message("none")
    assert message("openrouter")["reasoning_details"] == [
        {"type": "reasoning.text", "text": "raw", "format": "unknown"},
        {"type": "reasoning.summary", "summary": "sum", "format": "unknown"},
    ]
    assert message("openrouter")["reasoning"] == "rawsum"


def test_gemini_text_signature_goes_on_the_message() -> None:
    signature = Opaque(provider="google", format="gemini.thought_signature", data="SIG")
    response = Response(
        message=Message(role="assistant", parts=(TextPart(text="hi", signature=signature),)),
        finish_reason="stop",
    )
    body = encode_response(response, reasoning_dialect="gemini-compat")
    assert body["choices"][0]["message"]["extra_content"] == {
        "google": {"thought_signature": "SIG"}
    }  # type: ignore[index]
    assert decode_response(body).message.parts == response.message.parts


def test_foreign_finish_reasons_map_and_native_chat_ones_survive() -> None:
    call = ToolCallPart(call_id="c", name="f", arguments="{}")
    base = Response(message=Message(role="assistant", parts=(call,)), usage=Usage(input_tokens=1))
    safety = encode_response(
        Response(
            message=base.message, finish_reason="content_filter", native_finish_reason="SAFETY"
        )
    )
    assert safety["choices"][0]["finish_reason"] == "content_filter"  # type: ignore[index]
    legacy = decode_response(
        encode_response(
            Response(
                message=base.message,
                finish_reason="tool_calls",
                native_finish_reason="function_call",
            )
        )
    )
    assert (legacy.finish_reason, legacy.native_finish_reason) == ("tool_calls", "function_call")
    vendor = decode_response(
        encode_response(
            Response(
                message=base.message, finish_reason="other", native_finish_reason="vendor_reason"
            )
        )
    )
    assert vendor.native_finish_reason == "vendor_reason"


def test_extra_choices_are_kept_verbatim() -> None:
    payload = load("response_reasoning.json")
    second = copy.deepcopy(payload["choices"][0])
    second["index"] = 1
    payload["choices"].append(second)
    assert encode_response(decode_response(payload)) == payload


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"choices": []}, "choices"),
        ({}, "choices"),
        ({"choices": [{"index": 0}]}, "choices[0].message"),
        ({"choices": [{"message": {"role": "user", "content": "x"}}]}, "choices[0].message.role"),
        (
            {
                "choices": [{"message": {"role": "assistant", "content": "x"}}],
                "usage": {"prompt_tokens": "1"},
            },
            "usage.prompt_tokens",
        ),
        (
            {"choices": [{"message": {"role": "assistant", "content": "x"}}], "created": "now"},
            "created",
        ),
    ],
)
def test_malformed_responses_name_the_path(payload: dict[str, Any], path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_response(payload)
    assert caught.value.path == path


def test_trap30_logprobs_and_annotations_round_trip_exactly() -> None:
    """Trap 30: logprobs and citations have no canonical form; Chat gets them back verbatim."""
    payload = load("response_reasoning.json")
    choice = payload["choices"][0]
    choice["logprobs"] = {
        "content": [{"token": "hi", "logprob": -0.1, "bytes": [104, 105], "top_logprobs": []}],
        "refusal": None,
    }
    choice["message"]["annotations"] = [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://x.test",
                "title": "x",
                "start_index": 0,
                "end_index": 2,
            },
        }
    ]
    assert encode_response(decode_response(copy.deepcopy(payload))) == payload


def test_cloudflare_object_content_is_the_answers_json_text() -> None:
    """Cloudflare Workers AI (recorded in the corpus) answers a json_schema request with the
    object itself as ``content``: it decodes to the JSON text and goes back as the object."""
    wire: dict[str, Any] = {
        "id": "id-1",
        "object": "chat.completion",
        "created": 1,
        "model": "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": {"title": "Apples are tasty", "author": "Hadley Wickham"},
                    "refusal": None,
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
    }
    response = decode_response(copy.deepcopy(wire))
    assert json.loads(response.message.text) == wire["choices"][0]["message"]["content"]
    assert encode_response(response) == wire
    edited = replace(
        response, message=replace(response.message, parts=(TextPart(text="not JSON"),))
    )
    assert encode_response(edited)["choices"][0]["message"]["content"] == "not JSON"
