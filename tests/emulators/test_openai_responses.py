"""The Responses emulator: service validation rules, and the official SDK as its client."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import uvicorn
from openai.types.responses import Response as SdkResponse
from starlette.testclient import TestClient

from interlock.codecs._sse import SseParser
from interlock.emulators._brain import DefaultBrain, ScriptBrain, mint_token
from interlock.emulators.openai_responses import (
    TOKEN_KIND,
    OpenAIResponsesEmulator,
    create_app,
)

TOOLS: list[Any] = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": False}
]


def post(emulator: OpenAIResponsesEmulator, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with TestClient(create_app(emulator)) as client:
        response = client.post("/v1/responses", json=body)
    return response.status_code, response.json()


def error_of(
    emulator: OpenAIResponsesEmulator, input_items: list[Any], **fields: Any
) -> tuple[int, dict[str, Any]]:
    status, body = post(emulator, {"model": "m", "input": input_items, **fields})
    return status, body["error"]


def first_turn(emulator: OpenAIResponsesEmulator, **fields: Any) -> dict[str, Any]:
    status, body = post(
        emulator, {"model": "m", "input": "call get_weather", "tools": TOOLS, **fields}
    )
    assert status == 200
    return body


def test_answers_with_encrypted_reasoning_and_call_items() -> None:
    body = first_turn(OpenAIResponsesEmulator())
    kinds = [item["type"] for item in body["output"]]
    assert kinds == ["reasoning", "function_call"]
    assert body["output"][0]["summary"] == [] and body["output"][0]["encrypted_content"]
    summarized = first_turn(OpenAIResponsesEmulator(), reasoning={"summary": "auto"})
    assert summarized["output"][0]["summary"][0]["text"]


def test_every_response_and_stream_snapshot_is_a_complete_sdk_response() -> None:
    """The SDK client does not validate what it parses; the real service always sends
    ``created_at``, ``model``, ``tools``…, so the emulator must too (checked strictly)."""
    emulator = OpenAIResponsesEmulator()
    SdkResponse.model_validate(first_turn(emulator))
    with TestClient(create_app(emulator)) as client:
        streamed = client.post("/v1/responses", json={"model": "m", "input": "hi", "stream": True})
    parser = SseParser()
    events = [json.loads(event.data) for event in parser.feed(streamed.text) + parser.finish()]
    snapshots = [event["response"] for event in events if "response" in event]
    assert len(snapshots) == 3
    for snapshot in snapshots:
        SdkResponse.model_validate(snapshot)


@pytest.mark.parametrize(
    ("items", "status", "message", "param", "code"),
    [
        (
            [{"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}],
            400,
            "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
            "input[0].content[0]",
            "invalid_value",
        ),
        (
            [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
            400,
            "No tool output found for function call c1.",
            "input",
            None,
        ),
        (
            [{"type": "function_call_output", "call_id": "c9", "output": "x"}],
            400,
            "No tool call found for function call output with call_id c9.",
            "input",
            None,
        ),
        (
            [
                {
                    "type": "reasoning",
                    "summary": [],
                    "encrypted_content": mint_token(TOKEN_KIND, "x"),
                }
            ],
            400,
            "Item '' of type 'reasoning' was provided without its required following item.",
            "input",
            None,
        ),
        (
            [
                {"type": "reasoning", "id": "rs_x", "summary": [], "encrypted_content": "forged"},
                {"role": "assistant", "content": "x"},
            ],
            400,
            "The encrypted content for item rs_x could not be verified. Reason: Encrypted content could not be decrypted or parsed.",
            None,
            "invalid_encrypted_content",
        ),
        (
            [
                {"type": "reasoning", "id": "rs_made_up", "summary": []},
                {"role": "assistant", "content": "x"},
            ],
            404,
            "Item with id 'rs_made_up' not found.",
            "input",
            None,
        ),
        (
            [  # an id a gateway minted for another provider's answer (issue 11)
                {"role": "user", "content": "x"},
                {
                    "type": "message",
                    "id": "msg_interlock_chatcmpl-1_0",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "y", "annotations": []}],
                },
            ],
            404,
            "Item with id 'msg_interlock_chatcmpl-1_0' not found.",
            "input",
            None,
        ),
        (
            [
                {"type": "item_reference", "id": "a"},
                {"role": "user", "content": "x", "id": "u1"},
                {"role": "user", "content": "y", "id": "u1"},
            ],
            400,
            "Duplicate item found with id u1. Remove duplicate items from your input and try again.",
            "input",
            None,
        ),
    ],
)
def test_preflight_checks_use_the_service_error_strings(
    items: list[Any], status: int, message: str, param: str | None, code: str | None
) -> None:
    got_status, error = error_of(OpenAIResponsesEmulator(), items)
    assert (got_status, error["message"], error["param"], error["code"]) == (
        status,
        message,
        param,
        code,
    )
    assert error["type"] == "invalid_request_error"


def test_previous_response_checks() -> None:
    emulator = OpenAIResponsesEmulator()
    status, error = error_of(emulator, [], previous_response_id="resp_nope")
    assert (status, error["code"], error["param"]) == (
        400,
        "previous_response_not_found",
        "previous_response_id",
    )
    assert error["message"] == "Previous response with id 'resp_nope' not found."
    status, error = error_of(emulator, [], previous_response_id="resp_nope", conversation="conv_1")
    assert status == 400 and "Mutually exclusive" in error["message"]


def test_store_false_item_rules() -> None:
    emulator = OpenAIResponsesEmulator()
    output = first_turn(emulator, store=False)["output"]
    reasoning, call = output
    result = {"type": "function_call_output", "call_id": call["call_id"], "output": "15"}
    bare = {key: value for key, value in reasoning.items() if key != "encrypted_content"}
    status, error = error_of(emulator, [bare, call, result], store=False)
    assert status == 404 and error["message"].startswith(
        f"Item with id '{reasoning['id']}' not found. Items are not persisted"
    )
    status, error = error_of(emulator, [call, result], store=False)
    assert status == 404
    status, error = error_of(emulator, [call, result])
    assert error["message"] == (
        f"Item '{call['id']}' of type 'function_call' was provided without its required 'reasoning' item: '{reasoning['id']}'."
    )
    status, body = post(
        emulator, {"model": "m", "store": False, "input": [reasoning, call, result]}
    )
    assert status == 200 and body["output"][-1]["content"][0]["text"].startswith("Done:")


def test_continuation_uses_stored_responses() -> None:
    emulator = OpenAIResponsesEmulator()
    first = first_turn(emulator)
    call = first["output"][1]
    result = {"type": "function_call_output", "call_id": call["call_id"], "output": "15"}
    status, body = post(
        emulator, {"model": "m", "previous_response_id": first["id"], "input": [result]}
    )
    assert status == 200 and "returned 15" in body["output"][-1]["content"][0]["text"]
    status, error = error_of(emulator, [result])
    assert (
        error["message"]
        == f"No tool call found for function call output with call_id {call['call_id']}."
    )


def test_malformed_body_and_script_error() -> None:
    emulator = OpenAIResponsesEmulator(
        ScriptBrain(entries=[{"error": {"status": 429, "body": {"error": {"message": "slow"}}}}])
    )
    with TestClient(create_app(emulator)) as client:
        broken = client.post(
            "/v1/responses", content=b"{nope", headers={"content-type": "application/json"}
        )
        assert (
            broken.status_code == 400 and broken.json()["error"]["type"] == "invalid_request_error"
        )
        bad_type = client.post(
            "/v1/responses",
            json={
                "model": "m",
                "input": [
                    {"type": "function_call", "call_id": 1, "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": 1, "output": "x"},
                ],
            },
        )
        assert (
            bad_type.status_code == 400 and bad_type.json()["error"]["param"] == "input[0].call_id"
        )
        scripted = client.post("/v1/responses", json={"model": "m", "input": "hi"})
        assert scripted.status_code == 429
        assert len(emulator.received) == 2  # the unparseable body is not a JSON body


# ------------------------------------------------------------------ the official SDK on loopback


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[OpenAIResponsesEmulator, openai.OpenAI]]:
    emulator = OpenAIResponsesEmulator(DefaultBrain())
    port = free_port()
    config = uvicorn.Config(
        create_app(emulator), host="127.0.0.1", port=port, log_level="error", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="anything", max_retries=0
    )
    yield emulator, client
    client.close()
    server.should_exit = True
    thread.join(timeout=5)


def test_sdk_non_streaming(served: tuple[OpenAIResponsesEmulator, openai.OpenAI]) -> None:
    _, client = served
    response = client.responses.create(
        model="m", input="hello there", reasoning={"summary": "auto"}
    )
    assert response.output_text == "You said: hello there"
    assert response.output[0].type == "reasoning" and response.output[0].encrypted_content


def test_sdk_streaming(served: tuple[OpenAIResponsesEmulator, openai.OpenAI]) -> None:
    _, client = served
    with client.responses.stream(model="m", input="hello stream") as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert "response.output_text.delta" in types
    assert final.output_text == "You said: hello stream"
    raw = client.responses.create(model="m", input="again", stream=True)
    assert [event.sequence_number for event in raw] == list(range(len(types)))


def test_sdk_tool_round_trip_with_stateless_reasoning_replay(
    served: tuple[OpenAIResponsesEmulator, openai.OpenAI],
) -> None:
    emulator, client = served
    tools: Any = TOOLS
    first = client.responses.create(
        model="m", input='call get_weather with {"city": "Paris"}', tools=tools, store=False
    )
    call = next(item for item in first.output if item.type == "function_call")
    history: list[Any] = [{"role": "user", "content": "call get_weather"}]
    history += [item.model_dump(exclude_none=True) for item in first.output]
    history.append(
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"temp_c": 15}'}
    )
    second = client.responses.create(
        model="m", input=history, tools=tools, store=False, include=["reasoning.encrypted_content"]
    )
    assert "returned" in second.output_text
    replayed = emulator.received[-1]["input"]
    assert [item.get("type", "message") for item in replayed] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]


def test_each_vendor_accepts_only_the_encrypted_reasoning_it_issued() -> None:
    """An emulator standing for xAI mints its own blobs and, like the services, refuses
    OpenAI's (and OpenAI's refuses xAI's) with ``invalid_encrypted_content``."""
    xai = OpenAIResponsesEmulator(issuer="xai")
    ask: dict[str, Any] = {"model": "m", "input": "hi", "store": False}
    ask |= {"reasoning": {"effort": "low"}, "include": ["reasoning.encrypted_content"]}
    status, answer = post(xai, ask)
    assert status == 200
    reasoning = next(item for item in answer["output"] if item["type"] == "reasoning")
    assert reasoning["id"].startswith("rs_emuxai")
    message = next(item for item in answer["output"] if item["type"] == "message")
    history = [{"role": "user", "content": "hi"}, reasoning, message]
    again = {**ask, "input": [*history, {"role": "user", "content": "more"}]}
    assert post(xai, again)[0] == 200
    # Without ids (which only their issuer knows), the blob alone decides.
    blob = {"type": "reasoning", "summary": [], "encrypted_content": reasoning["encrypted_content"]}
    idless = [history[0], blob, {"role": "assistant", "content": "x"}, again["input"][-1]]
    assert post(OpenAIResponsesEmulator(issuer="xai"), {**ask, "input": idless})[0] == 200
    status, refused = post(OpenAIResponsesEmulator(), {**ask, "input": idless})
    assert status == 400 and refused["error"]["code"] == "invalid_encrypted_content"
    idless[1] = {**blob, "encrypted_content": mint_token(TOKEN_KIND, "x")}  # OpenAI's
    assert post(OpenAIResponsesEmulator(), {**ask, "input": idless})[0] == 200
    status, refused = post(xai, {**ask, "input": idless})
    assert status == 400 and refused["error"]["code"] == "invalid_encrypted_content"
