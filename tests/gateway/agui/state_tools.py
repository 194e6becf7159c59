"""Tools that use the run's shared state (``ToolContext.state``)."""

from __future__ import annotations

import json

from interlock.core_loop import ToolContext


def set_theme(color: str, context: ToolContext) -> str:
    """Switch the page's theme to ``color``."""
    assert context.state is not None
    context.state.update({"theme": color})
    return f"theme is now {color}"


def read_props(context: ToolContext) -> str:
    """What the frontend forwarded, and the state as the tool sees it."""
    assert context.state is not None
    return json.dumps({"props": context.state.forwarded_props, "state": context.state.value})


def delete_file(path: str = "default") -> str:
    """Delete ``path`` (needs approval; its arguments may not be edited)."""
    DELETED.append(path)
    return f"deleted {path}"


DELETED: list[str] = []
