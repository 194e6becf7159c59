"""An AG-UI agent on an Anthropic model: the loop calls the tool and answers over SSE."""

from __future__ import annotations

from pathlib import Path

from interlock.gateway.app import build_gateway
from interlock.gateway.config import parse_config
from tests.gateway.agui.harness import (
    TOOLS,
    binding_for,
    new_id,
    of_type,
    run_input,
    running,
    sse_events,
    sse_run,
    user,
)

CONFIG = """
[server]
state_dir = "{state_dir}"

[store]
url = "memory://"

[[upstreams]]
name = "claude"
protocol = "anthropic"
base_url = "emulator://anthropic"

[[models]]
name = "model"
upstream = "claude"
model = "claude-emulated"

[[agents]]
name = "assistant"
model = "model"
tools = ["{tools}:get_weather"]
"""


def test_an_agent_on_anthropic_calls_its_tool_and_answers(tmp_path: Path) -> None:
    config = parse_config(CONFIG.format(state_dir=tmp_path, tools=TOOLS), {})
    gateway = build_gateway(config)
    ask = user('call get_weather with {"city": "Paris"}')
    with running(binding_for(gateway)) as server:
        response, text = sse_run(server, run_input(new_id("thread"), [ask]))
    events = sse_events(text)
    assert response.status_code == 200
    assert of_type(events, "RUN_FINISHED"), events[-3:]
    assert of_type(events, "TOOL_CALL_START")[0]["toolCallName"] == "get_weather"
    answer = "".join(event["delta"] for event in of_type(events, "TEXT_MESSAGE_CONTENT"))
    assert answer.startswith("Done: get_weather returned")
