"""Tool-call pairing, checked on the canonical history before anything is sent.

Every service refuses a history whose tool calls and results do not pair up: a result that
answers no earlier call, or a call that never got its result (Chat Completions, Responses,
Gemini and Anthropic each with their own words and, for some, only once the model was
reached). The Chat encoder checks its own wire order; for every other upstream the gateway
checks the rule they share — each result answers an earlier call with its id, and each
call is answered by a later result — and refuses with a 400 naming the part, nothing sent.

Calls the service ran itself (``owner == "hosted"``, hosted items) need no result, but a
result may answer one (Responses ``custom_tool_call_output``). A request continuing stored
service state (``previous_response_id``, ``conversation``) holds results whose calls live
upstream: it is not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock.gateway.bodies import ProxyError
from interlock.gateway.metrics import Metrics
from interlock.gateway.upstream import Upstream
from interlock.transcript import HostedToolPart, Request, ToolCallPart, ToolResultPart


@dataclass(frozen=True, slots=True)
class Unpaired:
    """The first pairing rule the history breaks: where, and what."""

    location: str
    message: str


def find_unpaired(request: Request) -> Unpaired | None:
    """The first result answering no earlier call, else the first call no later result
    answers, in ``request``'s history (``None`` when every call and result pairs up)."""
    continuation = request.continuation
    if continuation.previous_response_id or continuation.conversation_id:
        return None
    seen: set[str] = set()
    waiting: dict[str, list[tuple[int, int]]] = {}
    """Call id → where its calls not answered yet are."""
    for index, message in enumerate(request.messages):
        for position, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart) and part.owner != "hosted":
                seen.add(part.call_id)
                waiting.setdefault(part.call_id, []).append((index, position))
            elif isinstance(part, HostedToolPart | ToolCallPart):
                call_id = _hosted_call_id(part)
                if call_id is not None:
                    seen.add(call_id)
            elif isinstance(part, ToolResultPart):
                if part.call_id not in seen:
                    message_text = (
                        f"the tool result for call id {part.call_id!r} answers no earlier "
                        "tool call of the history"
                    )
                    return Unpaired(f"messages[{index}].parts[{position}]", message_text)
                waiting.pop(part.call_id, None)
    unanswered = [(where[0], call_id) for call_id, where in waiting.items() if where]
    if not unanswered:
        return None
    (index, position), call_id = min(unanswered)
    where = f"messages[{index}].parts[{position}]"
    return Unpaired(where, f"the tool call {call_id!r} has no tool result in the history")


def _hosted_call_id(part: HostedToolPart | ToolCallPart) -> str | None:
    if isinstance(part, ToolCallPart):
        return part.call_id
    call_id = part.item.get("call_id")
    return call_id if isinstance(call_id, str) else None


def refuse_unpaired(upstream: Upstream, request: Request, metrics: Metrics) -> None:
    """A 400 ``tool_pairing`` naming the part when ``request`` cannot go to ``upstream``
    (Chat upstreams: their encoder checks the stricter order of their own wire)."""
    if upstream.dialect.name == "openai-chat":
        return
    unpaired = find_unpaired(request)
    if unpaired is not None:
        metrics.lossy_refused[upstream.name, "tool_pairing"] += 1
        message = f"history cannot be sent to {upstream.name}: {unpaired.message}"
        raise ProxyError(400, message, code="tool_pairing", param=unpaired.location)
