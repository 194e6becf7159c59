"""A Microsoft Agent Framework agent served over its own AG-UI endpoint, for a same-run peer.

Run with a Python that has ``agent-framework-core``, ``agent-framework-ag-ui``,
``agent-framework-openai`` and ``uvicorn`` installed (a separate virtual environment: this
script never imports Interlock, and Interlock never imports it). It serves one agent at
``POST /agui/bench`` (Server-Sent Events: Agent Framework's AG-UI endpoint has no WebSocket)
with uvicorn, one worker, access log off, like ``interlock serve``. SSE keep-alive comments
stay on at Agent Framework's default interval (``--keepalive``, 0 for off), as Interlock's are.

Two model modes:

- ``--upstream URL``: Agent Framework's OpenAI Chat Completions client pointed at an
  OpenAI-compatible server (for the benchmark, Interlock's Chat emulator with the same
  scripted stream Interlock's own agent gets), so both contestants pay an HTTP model call.
- ``--scripted``: a chat client built from the same layers as Agent Framework's OpenAI
  client (function invocation, middleware, telemetry) whose model step yields ``--chunks``
  text deltas in-process, with no HTTP.

``--check`` prints the installed versions and exits: 0 when everything imports, 2 with the
missing package named otherwise (the benchmark calls it first to fail clearly).

Usage: PEER_PYTHON bench/agent_framework_peer.py --port P (--upstream URL | --scripted)
       [--chunks 20] [--keepalive 15] [--check]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

PACKAGES = (
    "agent-framework-core",
    "agent-framework-ag-ui",
    "agent-framework-openai",
    "uvicorn",
    "fastapi",
)


def versions() -> str:
    """``name version`` for every package the peer needs; raises when one is missing."""
    return ", ".join(f"{name} {importlib.metadata.version(name)}" for name in PACKAGES)


def scripted_client(chunks: int) -> Any:
    """A chat client whose every streamed answer is ``chunks`` deltas ``word{i} ``, then stop."""
    from agent_framework import (
        BaseChatClient,
        ChatMiddlewareLayer,
        ChatResponse,
        ChatResponseUpdate,
        Content,
        FunctionInvocationLayer,
        Message,
    )
    from agent_framework.observability import ChatTelemetryLayer

    class ScriptedChatClient(
        FunctionInvocationLayer[Any],
        ChatMiddlewareLayer[Any],
        ChatTelemetryLayer[Any],
        BaseChatClient[Any],
    ):
        """The model step of Agent Framework's OpenAI client, minus the HTTP call."""

        def _inner_get_response(
            self,
            *,
            messages: Sequence[Any],
            stream: bool,
            options: Mapping[str, Any],
            **kwargs: Any,
        ) -> Any:
            if not stream:

                async def whole() -> Any:
                    text = "".join(f"word{index} " for index in range(chunks))
                    reply = Message(role="assistant", contents=[Content.from_text(text=text)])
                    return ChatResponse(messages=[reply], response_id="scripted")

                return whole()

            async def updates() -> AsyncIterator[Any]:
                for index in range(chunks):
                    yield ChatResponseUpdate(
                        contents=[Content.from_text(text=f"word{index} ", merge_mode="append")],
                        role="assistant",
                        model="M",
                        response_id="chatcmpl-b",
                        message_id="chatcmpl-b",
                    )
                yield ChatResponseUpdate(
                    contents=[],
                    role="assistant",
                    model="M",
                    finish_reason="stop",
                    response_id="chatcmpl-b",
                    message_id="chatcmpl-b",
                )

            return self._build_response_stream(updates())

    return ScriptedChatClient()


def upstream_client(base_url: str) -> Any:
    """Agent Framework's OpenAI Chat Completions client on ``base_url`` (model ``M``)."""
    from agent_framework.openai import OpenAIChatCompletionClient

    return OpenAIChatCompletionClient(model="M", api_key="bench", base_url=base_url)


def application(client: Any, keepalive: float) -> Any:
    """A FastAPI app with one agent at ``/agui/bench``: keep-alive comments every
    ``keepalive`` seconds (none when 0), one authorization principal (Agent Framework
    requires the mode to be declared)."""
    from agent_framework import Agent
    from agent_framework.ag_ui import add_agent_framework_fastapi_endpoint
    from fastapi import FastAPI

    app = FastAPI()
    agent = Agent(client=client, name="bench", instructions="Answer briefly.")
    add_agent_framework_fastapi_endpoint(
        app, agent, path="/agui/bench", keepalive_seconds=keepalive or None, single_user=True
    )
    return app


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--upstream", help="an OpenAI-compatible base URL (…/v1)")
    mode.add_argument("--scripted", action="store_true", help="the model in-process, no HTTP")
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--keepalive", type=float, default=15, help="seconds; 0 for none")
    parser.add_argument("--check", action="store_true", help="print versions and exit")
    arguments = parser.parse_args()
    try:
        found = versions()
    except importlib.metadata.PackageNotFoundError as missing:
        print(f"{sys.executable} cannot run the peer: {missing}", file=sys.stderr)
        return 2
    if arguments.check:
        print(found)
        return 0
    if arguments.port is None or not (arguments.upstream or arguments.scripted):
        parser.error("--port and one of --upstream/--scripted are required")
    import uvicorn

    client = upstream_client(arguments.upstream) if arguments.upstream else None
    client = client or scripted_client(arguments.chunks)
    app = application(client, arguments.keepalive)
    uvicorn.run(app, host="127.0.0.1", port=arguments.port, access_log=False, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
