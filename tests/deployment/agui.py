"""Small AG-UI clients for deployment tests: SSE runs over httpx, read frame by frame."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def run_input(thread_id: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    """A ``RunAgentInput``: a new user message ``text`` (when given) on ``thread_id``."""
    messages = [{"id": new_id("u"), "role": "user", "content": text}] if text else []
    return {"threadId": thread_id, "runId": new_id("run"), "messages": messages, **extra}


def sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The AG-UI events of an SSE response, as they arrive."""
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))


def run_sse(client: httpx.Client, url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One whole run over SSE; the events up to the terminal one."""
    with client.stream("POST", url, json=body, timeout=120) as response:
        response.raise_for_status()
        return list(sse_events(response))


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event.get("type") == kind]
