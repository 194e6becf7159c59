"""When encoding a request for Chat cannot refuse it: the replay check a proxy may skip.

A same-dialect proxy forwards the client's own bytes and runs :func:`encode_request` only
as a check (its payload is thrown away). :func:`cannot_refuse` answers, in a few steps per
message, whether that check can raise for ``request`` under any policy and reasoning
dialect; when it says so, the encoder is not run.

Invariant: ``cannot_refuse(request)`` implies ``encode_request(request, policy=any,
reasoning_dialect=any)`` returns without raising. The encoder raises only for a
continuation (Chat keeps no state), for loss under a strict policy or a foreign opaque
payload (hosted tools of another provider, parts Chat has no form for, reasoning it
cannot carry, signatures), and for tool-call pairing. A request of system, developer, user
and assistant messages that are each one plain text part (the shapes
:func:`~._message_encode.plain_wire` writes directly, tool results left out), with no
continuation and only Chat's own hosted tools, meets none of these: its wire messages carry
no tool calls and no tool messages, and tools, options and kept fields are only ever
dropped with a warning. Anything else answers ``False`` and takes the full check.
"""

from __future__ import annotations

from interlock.codecs.openai_chat._tools import HOSTED_PROVIDERS
from interlock.transcript import Request, TextPart


def cannot_refuse(request: Request) -> bool:
    """True when Chat's ``encode_request`` cannot raise for ``request`` (module docstring)."""
    continuation = request.continuation
    if continuation.previous_response_id or continuation.conversation_id:
        return False
    for hosted in request.hosted_tools:
        if hosted.provider not in HOSTED_PROVIDERS:
            return False
    for message in request.messages:
        # One plain text part of a non-tool message, no name, no extra (``plain_wire``'s).
        if message.extra or message.name is not None or message.role == "tool":
            return False
        parts = message.parts
        if len(parts) != 1:
            return False
        part = parts[0]
        if type(part) is not TextPart or part.signature is not None:
            return False
        if part.citations or part.extra:
            return False
    return True
