"""Agents from ``[[agents]]`` config: model route, instructions, tools, approvals, limits.

Tools are import paths (``module:attribute``). The attribute is a plain callable (its
schema comes from its signature) or a ready :class:`~interlock.core_loop.Tool`; names in
``approval_required`` always need a human decision. Frontend tools from a run's
``RunAgentInput.tools`` join the agent per run as client-owned declarations; a frontend
tool may never shadow a server tool.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from interlock.core_loop import Agent, ChatModel, Limits, Tool
from interlock.gateway.config import AgentConfig, ApprovalStyle, ConfigError
from interlock.gateway.proxy import Route
from interlock.transcript import ToolSpec


class ToolNameConflictError(ValueError):
    """A frontend tool has the name of a server tool (``RUN_ERROR`` ``TOOL_NAME_CONFLICT``)."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(
            "frontend tools may not reuse server tool names: " + ", ".join(sorted(names))
        )
        self.names = tuple(names)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRuntime:
    """One configured agent, ready to run: the loop's agent, its model and AG-UI style."""

    name: str
    agent: Agent
    model: ChatModel
    approval_style: ApprovalStyle
    provider: str
    fixed_tools: frozenset[str] = frozenset()
    trust_client_instructions: bool = False
    usage_model: str = ""
    """The configured model name its calls are counted under (:mod:`..usage`)."""
    deployment: str = ""
    """The upstream serving its model calls."""

    @property
    def server_tools(self) -> frozenset[str]:
        """The names of the agent's own tools."""
        return frozenset(tool.name for tool in self.agent.tools)

    def for_run(self, frontend_tools: Sequence[ToolSpec], shared: str | None = None) -> Agent:
        """The agent with this run's frontend tools added as client-owned declarations and
        ``shared`` (what the frontend shares, see ``application_block``) appended to its
        instructions.

        Raises :class:`ToolNameConflictError` if a frontend tool reuses a server tool name.
        """
        conflicts = [spec.name for spec in frontend_tools if spec.name in self.server_tools]
        if conflicts:
            raise ToolNameConflictError(conflicts)
        agent = self.agent
        if shared is not None:
            instructions = f"{agent.instructions}\n\n{shared}" if agent.instructions else shared
            agent = replace(agent, instructions=instructions)
        if not frontend_tools:
            return agent
        declared = tuple(
            Tool.client(spec.name, description=spec.description, parameters=spec.parameters)
            for spec in frontend_tools
        )
        return replace(agent, tools=(*agent.tools, *declared))


def load_tool(path: str, *, approval: bool, key: str, retry: bool = False) -> Tool:
    """The tool at ``module:attribute``; ``approval`` forces a decision before each call,
    ``retry`` makes an interrupted execution run once more (``on_interrupt="retry"``)."""
    module_name, _, attribute = path.partition(":")
    try:
        target: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigError(key, f"cannot import tool {path!r}: {error}") from error
    mode = "always" if approval else "never"
    if isinstance(target, Tool):
        loaded = replace(target, approval=mode) if approval else target
        return replace(loaded, on_interrupt="retry") if retry else loaded
    if not callable(target):
        raise ConfigError(key, f"{path!r} is neither a Tool nor a callable")
    on_interrupt = "retry" if retry else "report"
    return Tool.from_function(target, name=attribute, approval=mode, on_interrupt=on_interrupt)


def build_agent(config: AgentConfig, routes: Mapping[str, Route], model: ChatModel) -> AgentRuntime:
    """The runtime for one ``[[agents]]`` entry; raises :class:`ConfigError` on bad tools."""
    route = routes[config.model]
    required = set(config.approval_required)
    tools = tuple(
        load_tool(
            path,
            approval=path.rpartition(":")[2] in required,
            key=f"agents.{config.name}.tools[{index}]",
            retry=path.rpartition(":")[2] in config.retry_on_interrupt,
        )
        for index, path in enumerate(config.tools)
    )
    limits = Limits(
        max_iterations=config.max_iterations,
        max_function_calls=config.max_function_calls or None,
    )
    agent = Agent(
        model=route.model.model,
        instructions=config.instructions or None,
        tools=tools,
        limits=limits,
    )
    return AgentRuntime(
        name=config.name,
        agent=agent,
        model=model,
        approval_style=config.approval_style,
        provider=route.upstream.dialect.http.provider,
        fixed_tools=frozenset(config.approval_edits_forbidden),
        trust_client_instructions=config.trust_client_instructions,
        usage_model=config.model,
        deployment=route.upstream.name,
    )
