"""The loop on service-side continuation over a real Responses upstream (the emulator, which
stores responses and checks ``previous_response_id`` and call/output pairing like the
service does).

Contract matrix row: hosted per-service-call persistence. The service (the host) holds the
transcript: within a local function-call loop every model call continues from the one
before and sends only the new outputs, and the next turn sends only its new input, never
the earlier loop's calls and results again. The caller still sees the whole transcript.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import httpx
import pytest

from interlock.core_loop import (
    Agent,
    InMemoryLedgerStore,
    LoopResult,
    fold_events,
    run_agent,
    run_loop,
    sequential_ids,
    tool,
)
from interlock.emulators.openai_responses import OpenAIResponsesEmulator, create_app
from interlock.gateway.agui import UpstreamChatModel
from interlock.gateway.app import build_gateway
from interlock.gateway.config import parse_config
from interlock.transcript import (
    ApprovalResponsePart,
    HostedToolPart,
    HostedToolSpec,
    JsonObject,
    Message,
    TextPart,
)

CONFIG = """
[store]
url = "memory://"

[[upstreams]]
name = "up"
protocol = "openai-responses"
base_url = "https://api.openai.example/v1"
max_retries = 0

[[models]]
name = "model"
upstream = "up"
model = "gpt-emulated"
"""


def user(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


def item_types(body: JsonObject) -> list[str]:
    items = cast(list[JsonObject], body["input"])
    return [str(item.get("type", "message")) for item in items]


class Host:
    """One emulated service and a loop calling it through the gateway's upstream model."""

    def __init__(self) -> None:
        self.emulator = OpenAIResponsesEmulator()
        transport = httpx.ASGITransport(app=create_app(self.emulator))
        gateway = build_gateway(parse_config(CONFIG, {}), transports={"up": transport})
        self.model = UpstreamChatModel(gateway.proxy.routes["model"].upstream)
        self.executions: list[str] = []

        @tool
        def lookup(city: str) -> str:
            self.executions.append(city)
            return f"sunny in {city}"

        self.agent = Agent(model="gpt-emulated", tools=(lookup,), service_state=True)
        self.ledger = InMemoryLedgerStore()
        self.ids = sequential_ids()

    async def turn(
        self, messages: list[Message], previous: str | None, streaming: bool
    ) -> LoopResult:
        options: dict[str, Any] = {
            "ledger": self.ledger,
            "thread_id": "thread",
            "previous_response_id": previous,
            "ids": self.ids,
        }
        if streaming:
            events = [
                event async for event in run_loop(self.agent, self.model, messages, **options)
            ]
            return fold_events(events)
        return await run_agent(self.agent, self.model, messages, **options)


async def test_the_host_keeps_the_transcript_across_a_local_loop_and_the_next_turn() -> None:
    streamed = await two_turns(streaming=True)
    folded = await two_turns(streaming=False)
    assert streamed == folded, "streaming and non-streaming runs agree"


async def two_turns(*, streaming: bool) -> tuple[LoopResult, LoopResult]:
    host = Host()
    ask = user('call lookup with {"city":"Oslo"}')
    first = await host.turn([ask], None, streaming)
    assert first.outcome == "final" and first.response_id is not None
    assert host.executions == ["Oslo"]
    assert [m.role for m in first.messages] == ["assistant", "tool", "assistant"]
    history = [ask, *first.messages]
    again = user('call lookup with {"city":"Rome"}')
    second = await host.turn([*history, again], first.response_id, streaming)
    assert second.outcome == "final" and host.executions == ["Oslo", "Rome"]

    bodies = host.emulator.received
    assert [item_types(body) for body in bodies] == [
        ["message"],
        ["function_call_output"],
        ["message"],
        ["function_call_output"],
    ], "each call sends only what the host does not hold yet"
    stored = list(host.emulator.stored)
    assert [body.get("previous_response_id") for body in bodies] == [None, *stored[:3]]
    assert all(body.get("store") is not False for body in bodies)
    chain = host.emulator.stored[str(second.response_id)].items
    calls = [item["call_id"] for item in chain if item.get("type") == "function_call"]
    outputs = [item["call_id"] for item in chain if item.get("type") == "function_call_output"]
    assert len(calls) == 2 and calls == outputs, "the host's transcript has each pair once"
    assert second.text.endswith("returned sunny in Rome")
    return first, second


MCP_TOOL = HostedToolSpec(
    provider="openai",
    spec={"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example/mcp"},
)


async def hosted_round_trip(*, streaming: bool, approve: bool) -> tuple[LoopResult, LoopResult]:
    host = Host()
    host.agent = replace(host.agent, hosted_tools=(MCP_TOOL,))
    ask = user('call docs.search with {"q":"loop"}')
    first = await host.turn([ask], None, streaming)
    assert first.outcome == "awaiting_approval"
    (request,) = first.pending_approvals
    assert request.call.owner == "hosted" and request.call.server_label == "docs"
    decision = Message(
        role="user",
        parts=(ApprovalResponsePart(approval_id=request.approval_id, approved=approve),),
    )
    second = await host.turn([ask, *first.messages, decision], first.response_id, streaming)
    assert second.outcome == "final"
    resumed = host.emulator.received[-1]
    assert resumed["input"] == [
        {
            "type": "mcp_approval_response",
            "approval_request_id": request.approval_id,
            "approve": approve,
        }
    ], "the decision goes once, without the request the service stored"
    assert resumed["previous_response_id"] == first.response_id
    assert host.executions == [], "no local tool runs for a hosted call"
    return first, second


@pytest.mark.parametrize("approve", [True, False])
async def test_a_hosted_approval_round_trip_through_the_loop(approve: bool) -> None:
    streamed = await hosted_round_trip(streaming=True, approve=approve)
    folded = await hosted_round_trip(streaming=False, approve=approve)
    assert streamed == folded
    second = folded[1]
    ran = [part for m in second.messages for part in m.parts if isinstance(part, HostedToolPart)]
    if approve:
        assert [part.item["type"] for part in ran] == ["mcp_call"]
        assert second.text.startswith("docs.search returned")
    else:
        assert ran == [] and second.text == "docs.search was not approved."
