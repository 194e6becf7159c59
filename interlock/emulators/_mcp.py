"""Hosted MCP tools for the emulated Responses service: approval requests, decisions, calls.

The real service calls a remote MCP server itself; the emulator has no server to call, so
a hosted tool is named by the user like a function, with its server's label: ``call
LABEL.TOOL with {json}``, where LABEL is the ``server_label`` of an ``mcp`` tool of the
request. The answer follows the service's flow:

- the tool needs approval (the ``mcp`` tool's ``require_approval`` is absent, ``"always"``,
  or a filter whose ``never.tool_names`` does not list it): an ``mcp_approval_request``
  (``mcpr_…``), and nothing is called;
- otherwise (``"never"``, or listed under ``never``): an ``mcp_call`` with its output at once;
- an input whose last item is an ``mcp_approval_response``: approved, the ``mcp_call``
  (carrying ``approval_request_id``) then a message; rejected, only a message.

Validation (:func:`unanswerable`): an ``mcp_approval_response`` must answer an
``mcp_approval_request`` the service issued, in the input or in the stored chain
continued from; any other id is refused before anything runs (the message wording is
the emulator's own).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    JsonObject,
    JsonValue,
    Message,
    Part,
    Request,
    Response,
    TextPart,
    ToolCallPart,
)

PROVIDER = "openai"
_CALL = "call "


def unanswerable(
    items: Sequence[JsonObject], chain: Sequence[JsonObject]
) -> tuple[int, str] | None:
    """``(index, approval id)`` of the first ``mcp_approval_response`` in ``items`` whose
    request is neither in ``items`` before it nor in ``chain``; ``None`` when all answer one."""
    issued = {str(item.get("id")) for item in chain if item.get("type") == "mcp_approval_request"}
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "mcp_approval_request":
            issued.add(str(item.get("id")))
        elif kind == "mcp_approval_response":
            approval_id = str(item.get("approval_request_id"))
            if approval_id not in issued:
                return index, approval_id
    return None


def hosted_answer(
    request: Request, known: Sequence[JsonObject], stem: str
) -> tuple[Part, ...] | None:
    """The parts of a hosted-MCP answer to ``request``, or ``None`` when it asks none.

    ``known`` are the wire items of the input and the stored chain (to find the request a
    decision answers); ``stem`` makes the minted item ids unique.
    """
    last = request.messages[-1] if request.messages else None
    if last is None:
        return None
    decisions = [part for part in last.parts if isinstance(part, ApprovalResponsePart)]
    if decisions:
        return _decided(decisions, known, stem)
    if last.role != "user":
        return None
    servers = _servers(request)
    parts: list[Part] = []
    for index, (label, tool, arguments) in enumerate(_named(last.text, servers)):
        item_id = f"{stem}_{index}"
        if not _needs_approval(servers[label], tool):
            parts.append(_mcp_call(f"mcp_{item_id}", label, tool, arguments, None))
            continue
        call = ToolCallPart(
            call_id=f"mcpr_{item_id}",
            name=tool,
            arguments=arguments,
            owner="hosted",
            server_label=label,
            item_id=f"mcpr_{item_id}",
        )
        parts.append(ApprovalRequestPart(approval_id=f"mcpr_{item_id}", call=call))
    return tuple(parts) or None


def _decided(
    decisions: Sequence[ApprovalResponsePart], known: Sequence[JsonObject], stem: str
) -> tuple[Part, ...]:
    requests = {
        str(item.get("id")): item for item in known if item.get("type") == "mcp_approval_request"
    }
    parts: list[Part] = []
    said: list[str] = []
    for index, decision in enumerate(decisions):
        asked = requests.get(decision.approval_id)
        if asked is None:  # refused by validation before an answer is made
            continue
        label, tool = str(asked.get("server_label")), str(asked.get("name"))
        if not decision.approved:
            said.append(f"{label}.{tool} was not approved.")
            continue
        arguments = str(asked.get("arguments", "{}"))
        call = _mcp_call(f"mcp_{stem}_{index}", label, tool, arguments, decision.approval_id)
        parts.append(call)
        said.append(f"{label}.{tool} returned {call.item['output']}")
    parts.append(TextPart(text=" ".join(said) or "Nothing was decided."))
    return tuple(parts)


def _mcp_call(
    item_id: str, label: str, tool: str, arguments: str, approval_id: str | None
) -> HostedToolPart:
    item: JsonObject = {
        "type": "mcp_call",
        "id": item_id,
        "server_label": label,
        "name": tool,
        "arguments": arguments,
        "output": f"{tool} output for {arguments}",
        "error": None,
        "status": "completed",
    }
    if approval_id is not None:
        item["approval_request_id"] = approval_id
    return HostedToolPart(provider=PROVIDER, item_type="mcp_call", item=item, server_label=label)


def _servers(request: Request) -> dict[str, JsonObject]:
    """The request's ``mcp`` tools by ``server_label``."""
    return {
        str(spec.spec["server_label"]): spec.spec
        for spec in request.hosted_tools
        if spec.spec.get("type") == "mcp" and isinstance(spec.spec.get("server_label"), str)
    }


def _needs_approval(server: JsonObject, tool: str) -> bool:
    rule = server.get("require_approval", "always")
    if rule == "never":
        return False
    if isinstance(rule, dict):
        never = cast(JsonObject, rule).get("never")
        names = cast(JsonObject, never).get("tool_names") if isinstance(never, dict) else None
        return not (isinstance(names, list) and tool in cast(list[JsonValue], names))
    return True


def _named(text: str, servers: dict[str, JsonObject]) -> list[tuple[str, str, str]]:
    """``(label, tool, arguments)`` for each ``call LABEL.TOOL [with {json}]`` in ``text``."""
    found: list[tuple[str, str, str]] = []
    decoder = json.JSONDecoder()
    for chunk in text.split(_CALL)[1:]:
        name, _, rest = chunk.partition(" ")
        label, dot, tool = name.partition(".")
        if not dot or label not in servers or not tool:
            continue
        arguments = "{}"
        if rest.startswith("with {"):
            try:
                value, end = decoder.raw_decode(rest, len("with "))
            except ValueError:
                value, end = None, 0
            if isinstance(value, dict):
                arguments = rest[len("with ") : end]
        found.append((label, tool, arguments))
    return found


def answered(parts: tuple[Part, ...], template: Response) -> Response:
    """``template`` (the brain's answer, for its usage and model) with ``parts`` instead."""
    return Response(
        message=Message(role="assistant", parts=parts),
        id=template.id,
        model=template.model,
        created=template.created,
        finish_reason="stop",
        usage=template.usage,
    )
