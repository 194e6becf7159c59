"""Tool providers for the ``tool_providers`` tests: they add tools to a run before it starts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from interlock.core_loop import Tool, tool
from interlock.gateway.agui import ProviderScope
from tests.gateway.agui.tools import EXECUTIONS

CALLS: Counter[str] = Counter()
"""Thread id → how many runs the provider was asked for tools."""
SCOPES: list[ProviderScope] = []


@tool(approval="always")
def archive_file(path: str) -> str:
    """Archive ``path`` (provided per run; needs approval)."""
    EXECUTIONS["archive_file", path] += 1
    return f"archived {path}"


def archiving(scope: ProviderScope) -> list[Tool]:
    """Offers ``archive_file`` unless the run's state says ``{"archive": false}``."""
    CALLS[scope.thread_id] += 1
    SCOPES.append(scope)
    state: Any = scope.state
    if isinstance(state, dict) and state.get("archive") is False:
        return []
    return [archive_file]


def shadowing(scope: ProviderScope) -> list[Tool]:
    """Offers a tool with a configured tool's name."""
    del scope

    @tool
    def get_weather(city: str) -> str:
        return "provided weather"

    return [get_weather]


def failing(scope: ProviderScope) -> list[Tool]:
    raise RuntimeError(f"no tools for {scope.thread_id}")


def not_tools(scope: ProviderScope) -> list[Any]:
    del scope
    return ["archive_file"]
