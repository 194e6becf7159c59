"""Encoder traces replayed through the official @ag-ui/client 1.0.0 checks (Node harness).

``tests/agui_client/verify.mjs`` applies the client's own enforceEvents → transformChunks →
verifyEvents; a trace also fails if the client had to strip or drop anything. Skipped
when Node or the installed package is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from interlock.codecs.agui import AguiEventEncoder, messages_to_agui
from interlock.transcript import (
    HostedToolPart,
    InputRequestPart,
    JsonObject,
    MediaPart,
    PartStarted,
    ReasoningPart,
    Response,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    response_to_updates,
)

from .scenarios import KEY, SCENARIOS, encoder, feed
from .test_encoder import LABELLED, RESPONSE
from .test_snapshot import DONE, THREAD

HARNESS = Path(__file__).resolve().parents[2] / "agui_client"
pytestmark = pytest.mark.node


def leftovers() -> list[JsonObject]:
    run = encoder()
    events = run.start()
    events += feed(
        run,
        [
            ResponseStarted(),
            PartStarted(index=0, part=ReasoningPart(reasoning_kind="raw", text="hm")),
            PartStarted(index=1, part=TextPart(text="partial")),
            PartStarted(index=2, part=ToolCallPart(call_id="c", name="f", arguments="{")),
        ],
    )
    return events + run.finish()


def stream_failure() -> list[JsonObject]:
    run = encoder()
    events = run.start()
    return events + feed(
        run,
        [
            PartStarted(index=0, part=TextPart(text="x")),
            StreamFailed(code="UPSTREAM_CUT", message="cut"),
        ],
    )


def everything_else() -> list[JsonObject]:
    run = encoder("confirm_changes")
    events = run.start() + run.state_snapshot({"doc": ""})
    events += run.state_delta([{"op": "replace", "path": "/doc", "value": "x"}])
    events += feed(run, response_to_updates(RESPONSE))
    hosted = HostedToolPart(provider="openai", item_type="web_search_call", item={"id": "ws"})
    events += feed(run, [ResponseStarted(), PartStarted(index=0, part=hosted)])
    result = ToolResultPart(
        call_id="call_1",
        output=(TextPart(text="chart"), MediaPart(media_type="image/png", data="iVBO")),
    )
    events += run.tool_result(result)
    events += run.messages_snapshot(
        messages_to_agui(
            (*THREAD, DONE), seal_key=KEY, tenant="acme", approval_style="confirm_changes"
        )
    )
    events += run.custom("note", None)
    request = InputRequestPart(request_id="q", occurrence_id="o", call_id="c", prompt="Color?")
    events += run.input_request(request)
    return events + run.finish()


def labels() -> list[JsonObject]:
    """The codec's metadata labels, streamed and in a snapshot: nothing may be stripped."""
    run = encoder()
    events = run.start() + feed(run, response_to_updates(Response(message=LABELLED)))
    denied = ToolResultPart(call_id="mcp_1", output=(TextPart(text="no"),), outcome="denied")
    events += run.tool_result(denied)
    snapshot = messages_to_agui((LABELLED,), seal_key=KEY, tenant="acme")
    return events + run.messages_snapshot(snapshot) + run.finish()


def test_the_official_client_accepts_every_trace() -> None:
    node = shutil.which("node")
    if node is None or not (HARNESS / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.skip("node or @ag-ui/client is not installed")
    traces = {name: scenario() for name, scenario in SCENARIOS.items()}
    traces |= {
        "leftovers": leftovers(),
        "stream_failure": stream_failure(),
        "everything_else": everything_else(),
        "labels": labels(),
        "error_first": AguiEventEncoder(thread_id="t", run_id="r").fail("bad", code="INVALID"),
    }
    document = {"traces": [{"name": name, "events": events} for name, events in traces.items()]}
    completed = subprocess.run(
        [node, str(HARNESS / "verify.mjs")],
        input=json.dumps(document),
        capture_output=True,
        text=True,
        cwd=HARNESS,
        timeout=60,
        check=False,
    )
    verdicts = {trace["name"]: trace for trace in json.loads(completed.stdout)["traces"]}
    failures = {
        name: verdict.get("error") for name, verdict in verdicts.items() if not verdict["ok"]
    }
    assert failures == {}
    assert set(verdicts) == set(traces)
