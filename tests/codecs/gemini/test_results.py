"""functionResponse ⇄ tool results: the invertible wrapping table (trap 20)."""

from __future__ import annotations

import pytest

from interlock.codecs import gemini
from interlock.transcript import (
    JsonObject,
    JsonPart,
    MediaPart,
    Message,
    OutputPart,
    Request,
    TextPart,
    ToolOutcome,
    ToolResultPart,
)


def round_trip(
    output: tuple[OutputPart, ...], outcome: ToolOutcome = "success"
) -> tuple[JsonObject, ToolResultPart]:
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id="c1", name="f", output=output, outcome=outcome),),
            ),
        ),
    )
    payload = gemini.encode_request(history).payload
    wire = payload["contents"][1]["parts"][0]["functionResponse"]  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportArgumentType, reportCallIssue]
    back = gemini.decode_request(payload).messages[1].parts[0]
    assert isinstance(back, ToolResultPart)
    return wire, back  # pyright: ignore[reportReturnType]


@pytest.mark.parametrize(
    ("output", "outcome", "response"),
    [
        ((TextPart(text="15 C"),), "success", {"output": "15 C"}),
        ((TextPart(text="boom"),), "failed", {"error": "boom"}),
        ((JsonPart(value={"temp": 15}),), "success", {"temp": 15}),
        ((JsonPart(value={"code": 7}),), "failed", {"error": {"code": 7}}),
        ((JsonPart(value=[1, 2]),), "success", {"output": [1, 2]}),
        ((JsonPart(value=None),), "success", {"output": None}),
        ((JsonPart(value={"output": {"nested": True}}),), "success", {"output": {"nested": True}}),
        ((JsonPart(value={}),), "success", {}),
    ],
)
def test_wrapping_is_invertible(
    output: tuple[OutputPart, ...], outcome: ToolOutcome, response: JsonObject
) -> None:
    wire, back = round_trip(output, outcome)
    assert wire == {"id": "c1", "name": "f", "response": response}
    assert (back.output, back.outcome) == (output, outcome)


def test_denied_and_interrupted_travel_as_errors() -> None:
    wire, back = round_trip((TextPart(text="The user denied it."),), "denied")
    assert wire["response"] == {"error": "The user denied it."}
    assert back.outcome == "failed"


def test_media_outputs_travel_in_function_response_parts() -> None:
    image = MediaPart(media_type="image/png", data="iVBORw0KGgo=")
    wire, back = round_trip((JsonPart(value={"w": 1}), image))
    assert wire["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]
    assert back.output == (JsonPart(value={"w": 1}), image)


def test_several_text_outputs_are_flattened_with_a_warning() -> None:
    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="tool",
                parts=(
                    ToolResultPart(
                        call_id="c", name="f", output=(TextPart(text="a"), JsonPart(value=1))
                    ),
                ),
            ),
        ),
    )
    encoded = gemini.encode_request(history)
    assert encoded.payload["contents"][1]["parts"][0]["functionResponse"]["response"] == {
        "output": ["a", 1]
    }  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportArgumentType, reportCallIssue]
    assert [w.code for w in encoded.warnings] == ["tool_output_flattened"]


def test_result_name_comes_from_its_call_when_missing() -> None:
    from interlock.codecs.gemini._wire import signature
    from interlock.transcript import ToolCallPart

    history = Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="q"),)),
            Message(
                role="assistant",
                parts=(
                    ToolCallPart(
                        call_id="c9", name="lookup", arguments="{}", signature=signature("c2ln")
                    ),
                ),
            ),
            Message(
                role="tool", parts=(ToolResultPart(call_id="c9", output=(TextPart(text="x"),)),)
            ),
        ),
    )
    parts = gemini.encode_request(history).payload["contents"][2]["parts"]  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportArgumentType, reportCallIssue]
    assert parts == [
        {"functionResponse": {"id": "c9", "name": "lookup", "response": {"output": "x"}}}
    ]
