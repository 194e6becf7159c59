"""``tool_providers``: server tools added to a run before it starts, over real SSE and
WebSocket, and ``invoke_functions = false`` agents.

Contract matrix row: provider-injected approval tool. An approval-required tool a provider
adds is resolved inside the run like a configured one: the approval pauses the run, the
run that resumes it (the provider adds the tool again) executes it exactly once and emits
one result; without the tool on the resuming run the approved call fails, never running.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from interlock.gateway.app import build_gateway
from interlock.gateway.config import ConfigError, parse_config
from tests.gateway.agui import provided
from tests.gateway.agui.harness import (
    TOOLS,
    Server,
    binding_for,
    new_id,
    of_type,
    resume_all,
    run_input,
    run_over,
    serve,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS

PROVIDERS = "tests.gateway.agui.provided"

CONFIG = f"""
[server]
state_dir = "{{state_dir}}"

[store]
url = "sqlite:///{{state_dir}}/s.db"

[[upstreams]]
name = "emulated"
protocol = "openai-responses"
base_url = "emulator://openai-responses"

[[models]]
name = "model"
upstream = "emulated"
model = "gpt-emulated"

[[agents]]
name = "provided"
model = "model"
tools = ["{TOOLS}:get_weather"]
tool_providers = ["{PROVIDERS}:archiving"]

[[agents]]
name = "shadowing"
model = "model"
tools = ["{TOOLS}:get_weather"]
tool_providers = ["{PROVIDERS}:shadowing"]

[[agents]]
name = "failing"
model = "model"
tool_providers = ["{PROVIDERS}:failing"]

[[agents]]
name = "not-tools"
model = "model"
tool_providers = ["{PROVIDERS}:not_tools"]

[[agents]]
name = "hands-off"
model = "model"
tools = ["{TOOLS}:get_weather", "{TOOLS}:delete_file"]
approval_required = ["delete_file"]
invoke_functions = false
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("providers")
    config = parse_config(CONFIG.format(state_dir=directory), {})
    yield from serve(binding_for(build_gateway(config)))


async def send(
    server: Server, body: dict[str, Any], transport: str, agent: str = "provided"
) -> list[dict[str, Any]]:
    return await run_over(server, body, transport, agent)


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_a_provided_approval_tool_runs_once_in_the_run_that_resumes_it(
    server: Server, transport: str
) -> None:
    thread, path = new_id("t"), new_id("archive")
    ask = run_input(thread, [user(f'call archive_file with {{"path":"{path}"}}')])
    paused = await send(server, ask, transport)
    (interrupt,) = paused[-1]["outcome"]["interrupts"]
    assert interrupt["message"] == "Approve running archive_file?"
    assert EXECUTIONS["archive_file", path] == 0, "nothing runs before the approval"
    resume = run_input(thread, resume=resume_all(paused[-1], {"approved": True}))
    events = await send(server, resume, transport)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == interrupt["toolCallId"]
    assert result["content"] == f"archived {path}" and EXECUTIONS["archive_file", path] == 1
    again = await send(server, resume, transport)
    assert of_type(again, "TOOL_CALL_RESULT") == [] and EXECUTIONS["archive_file", path] == 1
    assert provided.CALLS[thread] >= 2, "the provider is asked on every run"
    scope = next(scope for scope in provided.SCOPES if scope.thread_id == thread)
    assert scope.tenant == "default"


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_approved_call_of_a_tool_no_longer_provided_never_runs(
    server: Server, transport: str
) -> None:
    thread, path = new_id("t"), new_id("gone")
    ask = run_input(thread, [user(f'call archive_file with {{"path":"{path}"}}')])
    paused = await send(server, ask, transport)
    resume = run_input(
        thread, resume=resume_all(paused[-1], {"approved": True}), state={"archive": False}
    )
    events = await send(server, resume, transport)
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["metadata"]["interlock"]["outcome"] == "failed"
    assert "archive_file" in result["content"] and EXECUTIONS["archive_file", path] == 0


@pytest.mark.parametrize("transport", ["sse", "ws"])
@pytest.mark.parametrize(
    ("agent", "code", "named"),
    [
        ("shadowing", "TOOL_NAME_CONFLICT", "get_weather"),
        ("failing", "TOOL_PROVIDER_FAILED", "no tools for"),
        ("not-tools", "TOOL_PROVIDER_FAILED", "returned a str"),
    ],
)
async def test_a_provider_that_cannot_give_tools_refuses_the_run(
    server: Server, transport: str, agent: str, code: str, named: str
) -> None:
    events = await send(server, run_input(new_id("t"), [user("hi")]), transport, agent)
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == code
    assert named in events[-1]["message"]


async def test_a_provided_tool_may_not_shadow_a_frontend_tool(server: Server) -> None:
    frontend = [{"name": "archive_file", "description": "d", "parameters": {"type": "object"}}]
    body = run_input(new_id("t"), [user("hi")], tools=frontend)
    events = await send(server, body, "sse")
    assert events[-1]["code"] == "TOOL_NAME_CONFLICT" and "archive_file" in events[-1]["message"]


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_agent_that_invokes_no_functions_hands_every_call_to_the_client(
    server: Server, transport: str
) -> None:
    thread, city, path = new_id("t"), new_id("city"), new_id("kept")
    text = (
        f'call get_weather with {{"city":"{city}"}} and call delete_file with {{"path":"{path}"}}'
    )
    events = await send(server, run_input(thread, [user(text)]), transport, "hands-off")
    outcome = events[-1]["outcome"]
    starts = {
        event["toolCallName"]: event["toolCallId"] for event in of_type(events, "TOOL_CALL_START")
    }
    assert sorted(outcome["pendingToolCallIds"]) == sorted(starts.values())
    assert "interrupts" not in outcome, "no approval is asked: nothing would run anyway"
    assert of_type(events, "TOOL_CALL_RESULT") == []
    assert (EXECUTIONS["get_weather", city], EXECUTIONS["delete_file", path]) == (0, 0)
    answers = [
        {"id": new_id("tm"), "role": "tool", "toolCallId": call_id, "content": f"{name} by client"}
        for name, call_id in starts.items()
    ]
    finished = await send(server, run_input(thread, answers), transport, "hands-off")
    assert finished[-1]["type"] == "RUN_FINISHED", finished[-1]
    assert finished[-1]["outcome"] == {"type": "success"}
    assert (EXECUTIONS["get_weather", city], EXECUTIONS["delete_file", path]) == (0, 0)


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ('tool_providers = ["no_colon"]', "agents[0].tool_providers[0]"),
        ('tool_providers = ["tests.gateway.agui.provided:missing"]', "agents.a.tool_providers[0]"),
        ('tool_providers = ["tests.gateway.agui.provided:CALLS"]', "agents.a.tool_providers[0]"),
        ('invoke_functions = "no"', "agents[0].invoke_functions"),
        ("invoke_function = false", "agents[0].invoke_function"),
    ],
)
def test_bad_agent_entries_are_refused_naming_the_key(entry: str, key: str) -> None:
    text = f"""
[[upstreams]]
name = "up"
protocol = "openai-responses"
base_url = "emulator://openai-responses"

[[models]]
name = "m"
upstream = "up"
model = "x"

[[agents]]
name = "a"
model = "m"
{entry}
"""
    with pytest.raises(ConfigError) as refused:
        binding_for(build_gateway(parse_config(text, {})))
    assert key in str(refused.value)
