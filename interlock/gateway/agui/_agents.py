"""Agents from ``[[agents]]`` config: model route, instructions, tools, approvals, limits.

Tools are import paths (``module:attribute``). The attribute is a plain callable (its
schema comes from its signature) or a ready :class:`~interlock.core_loop.Tool`; names in
``approval_required`` always need a human decision. Frontend tools from a run's
``RunAgentInput.tools`` join the agent per run as client-owned declarations; a frontend
tool may never shadow a server tool.

``tool_providers`` are import paths of callables that add server tools to one run, before
it starts: each is called with the run's :class:`ProviderScope` and returns
:class:`~interlock.core_loop.Tool` objects (their own ``approval`` applies). A provided
tool is resolved in the run like a configured one, so an approval asked in one run is
executed in the run that resumes it if the provider offers the tool again (and fails as
an unknown tool, never running, if it does not). A provided tool may not reuse a server
or frontend tool's name (``TOOL_NAME_CONFLICT``); a provider that raises or returns
something else refuses the run (``TOOL_PROVIDER_FAILED``) before anything runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field, replace
from typing import cast

from interlock.core_loop import Agent, ChatModel, Limits, Tool
from interlock.gateway.config import AgentConfig, ApprovalStyle, ConfigError
from interlock.gateway.proxy import Route
from interlock.transcript import JsonValue, ToolSpec


class RunToolsError(ValueError):
    """The run's tools cannot be assembled; ``code`` is the ``RUN_ERROR`` code."""

    code = "TOOL_PROVIDER_FAILED"


class ToolNameConflictError(RunToolsError):
    """A frontend or provided tool reuses a tool name (``RUN_ERROR`` ``TOOL_NAME_CONFLICT``)."""

    code = "TOOL_NAME_CONFLICT"

    def __init__(self, names: Sequence[str], what: str = "frontend tools") -> None:
        super().__init__(f"{what} may not reuse tool names: " + ", ".join(sorted(set(names))))
        self.names = tuple(names)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderScope:
    """What a tool provider is told about the run it provides tools for.

    ``state`` and ``forwarded_props`` are the run's (the client's, or the thread's state);
    they are the provider's own copies.
    """

    tenant: str
    thread_id: str
    state: JsonValue = None
    forwarded_props: JsonValue = None


ToolProvider = Callable[[ProviderScope], Iterable[Tool]]
"""A ``tool_providers`` entry: the server tools to add to one run."""


@dataclass(frozen=True, slots=True)
class NamedProvider:
    """A loaded tool provider and the import path it was configured as."""

    path: str
    provide: ToolProvider

    def tools(self, scope: ProviderScope) -> tuple[Tool, ...]:
        """The provider's tools for ``scope``; :class:`RunToolsError` if it fails."""
        own = replace(scope, state=deepcopy(scope.state))
        own = replace(own, forwarded_props=deepcopy(scope.forwarded_props))
        try:
            # User code: what it returns is checked, not trusted to match the annotation.
            provided = tuple(cast(Iterable[object], self.provide(own)))
        except Exception as error:  # a provider's failure refuses the run, whatever it is
            raise RunToolsError(f"tool provider {self.path} failed: {error!r}") from error
        tools = tuple(item for item in provided if isinstance(item, Tool))
        if len(tools) != len(provided):
            kind = next(type(item).__name__ for item in provided if not isinstance(item, Tool))
            raise RunToolsError(f"tool provider {self.path} returned a {kind}, not a Tool")
        return tools


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
    """Its model's (first) upstream: a call is counted under it unless a routed call
    was answered elsewhere (:mod:`._calls`)."""
    tool_providers: tuple[NamedProvider, ...] = field(default=())
    """Add server tools to each run (module docstring)."""
    instructed: dict[str, Agent] = field(
        init=False, default_factory=dict[str, "Agent"], compare=False, repr=False
    )
    """The agent with the last shared block appended to its instructions, by that block
    (runs of one agent mostly share the same one; an :class:`Agent` is never changed)."""

    @property
    def server_tools(self) -> frozenset[str]:
        """The names of the agent's own tools."""
        return frozenset(tool.name for tool in self.agent.tools)

    def for_run(
        self,
        frontend_tools: Sequence[ToolSpec],
        shared: str | None = None,
        scope: ProviderScope | None = None,
    ) -> Agent:
        """The agent with this run's provided tools (from ``tool_providers``, given
        ``scope``) and frontend tools (client-owned declarations) added, and ``shared``
        (what the frontend shares, see ``application_block``) appended to its instructions.

        Raises :class:`ToolNameConflictError` if a frontend or provided tool reuses a name,
        :class:`RunToolsError` if a provider fails.
        """
        provided = self._provided(scope) if scope is not None else ()
        names = self.server_tools | {tool.name for tool in provided}
        conflicts = [spec.name for spec in frontend_tools if spec.name in names]
        if conflicts:
            raise ToolNameConflictError(conflicts)
        agent = self.agent if shared is None else self._sharing(shared)
        if not frontend_tools and not provided:
            return agent
        declared = tuple(
            Tool.client(spec.name, description=spec.description, parameters=spec.parameters)
            for spec in frontend_tools
        )
        return replace(agent, tools=(*agent.tools, *provided, *declared))

    def _sharing(self, shared: str) -> Agent:
        """The agent with ``shared`` appended to its instructions (kept for the next run)."""
        memo = self.instructed
        agent = memo.get(shared)
        if agent is None:
            base = self.agent
            instructions = f"{base.instructions}\n\n{shared}" if base.instructions else shared
            agent = replace(base, instructions=instructions)
            memo.clear()
            memo[shared] = agent
        return agent

    def _provided(self, scope: ProviderScope) -> tuple[Tool, ...]:
        provided = [tool for provider in self.tool_providers for tool in provider.tools(scope)]
        names = [tool.name for tool in provided]
        reused = [n for n in names if n in self.server_tools or names.count(n) > 1]
        if reused:
            raise ToolNameConflictError(reused, "provided tools")
        return tuple(provided)


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


def load_provider(path: str, *, key: str) -> NamedProvider:
    """The tool provider at ``module:attribute`` (a callable); :class:`ConfigError` if not."""
    module_name, _, attribute = path.partition(":")
    try:
        target: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigError(key, f"cannot import tool provider {path!r}: {error}") from error
    if not callable(target):
        raise ConfigError(key, f"{path!r} is not callable")
    return NamedProvider(path, cast(ToolProvider, target))


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
        invoke_functions=config.invoke_functions,
    )
    providers = tuple(
        load_provider(path, key=f"agents.{config.name}.tool_providers[{index}]")
        for index, path in enumerate(config.tool_providers)
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
        tool_providers=providers,
    )
