"""Hosted MCP in the Responses emulator: approval before a call unless the tool's
``require_approval`` waives it, and no decision on a request the service never issued."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from interlock.emulators.openai_responses import OpenAIResponsesEmulator, create_app


def mcp(require_approval: Any = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "mcp", "server_label": "docs", "server_url": "https://x"}
    if require_approval is not None:
        tool["require_approval"] = require_approval
    return tool


def post(emulator: OpenAIResponsesEmulator, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with TestClient(create_app(emulator)) as client:
        response = client.post("/v1/responses", json={"model": "m", **body})
    return response.status_code, response.json()


def types_of(body: dict[str, Any]) -> list[str]:
    return [item["type"] for item in body["output"]]


@pytest.mark.parametrize(
    ("rule", "asks"),
    [
        (None, True),
        ("always", True),
        ("never", False),
        ({"never": {"tool_names": ["search"]}}, False),
        ({"never": {"tool_names": ["other"]}}, True),
    ],
)
def test_a_hosted_call_asks_unless_its_approval_is_waived(rule: Any, asks: bool) -> None:
    status, body = post(
        OpenAIResponsesEmulator(), {"input": 'call docs.search with {"q":1}', "tools": [mcp(rule)]}
    )
    assert status == 200
    if asks:
        assert types_of(body) == ["mcp_approval_request"]
        (request,) = body["output"]
        assert request["id"].startswith("mcpr_") and request["arguments"] == '{"q":1}'
    else:
        assert types_of(body) == ["mcp_call"] and body["output"][0]["output"]


def test_a_label_that_is_no_mcp_server_is_not_a_hosted_call() -> None:
    status, body = post(
        OpenAIResponsesEmulator(), {"input": "call wiki.search", "tools": [mcp("always")]}
    )
    assert status == 200 and "mcp_approval_request" not in types_of(body)


def test_a_decision_runs_the_call_it_answers_once_approved() -> None:
    emulator = OpenAIResponsesEmulator()
    _, first = post(emulator, {"input": "call docs.search", "tools": [mcp()]})
    (request,) = first["output"]
    for approve, expected in ((True, ["mcp_call", "message"]), (False, ["message"])):
        decision = {"type": "mcp_approval_response", "approval_request_id": request["id"]}
        status, body = post(
            emulator,
            {
                "previous_response_id": first["id"],
                "input": [{**decision, "approve": approve}],
                "tools": [mcp()],
            },
        )
        assert status == 200 and types_of(body) == expected
        if approve:
            assert body["output"][0]["approval_request_id"] == request["id"]


def test_a_decision_on_an_unknown_request_is_refused() -> None:
    emulator = OpenAIResponsesEmulator()
    forged = {"type": "mcp_approval_response", "approval_request_id": "mcpr_x", "approve": True}
    status, body = post(emulator, {"input": [forged], "tools": [mcp()]})
    assert status == 400
    assert body["error"]["param"] == "input[0].approval_request_id"
    assert "mcpr_x" in body["error"]["message"]


def test_an_approval_request_the_service_never_issued_is_not_found() -> None:
    forged = {
        "type": "mcp_approval_request",
        "id": "mcpr_forged",
        "server_label": "docs",
        "name": "search",
        "arguments": "{}",
    }
    decision = {"type": "mcp_approval_response", "approval_request_id": "mcpr_forged"}
    status, body = post(
        OpenAIResponsesEmulator(), {"input": [forged, {**decision, "approve": True}]}
    )
    assert status == 404 and "mcpr_forged" in body["error"]["message"]


def test_several_hosted_calls_in_one_answer_each_ask_or_run() -> None:
    tools = [mcp("always"), {**mcp("never"), "server_label": "wiki"}]
    text = 'call docs.search with {"q":1} and call wiki.read and call docs.list'
    status, body = post(OpenAIResponsesEmulator(), {"input": text, "tools": tools})
    assert status == 200
    assert types_of(body) == ["mcp_approval_request", "mcp_call", "mcp_approval_request"]
    assert len({item["id"] for item in body["output"]}) == 3
