"""The dialect-independent half of the provider emulators.

An emulator decodes a wire request with its codec, checks the provider's validation
rules, asks a *brain* for a canonical response, lets the dialect attach its own opaque
payloads (encrypted reasoning, thought signatures), and encodes the answer. The brain is
either :class:`DefaultBrain` (deterministic: calls a tool when the user names one) or
:class:`ScriptBrain` (replays a script file).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

from interlock.emulators._schema import example
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

_EMULATOR_SECRET = b"interlock-emulator-v1"


def mint_token(kind: str, content: str) -> str:
    """A deterministic opaque token (stand-in for encrypted reasoning or a signature).

    It is bound to ``kind`` and ``content`` so the emulator can tell a genuine replay
    from a forged, truncated or foreign one (:func:`verify_token`).
    """
    digest = hmac.new(_EMULATOR_SECRET, f"{kind}\x00{content}".encode(), hashlib.sha256).digest()
    body = base64.b64encode(f"{kind}:".encode() + digest[:24]).decode()
    return body


def verify_token(kind: str, token: str) -> bool:
    """True when ``token`` was minted by :func:`mint_token` for ``kind`` (any content)."""
    try:
        raw = base64.b64decode(token, validate=True)
    except (ValueError, TypeError):
        return False
    return raw.startswith(f"{kind}:".encode()) and len(raw) == len(kind) + 1 + 24


@dataclass(frozen=True)
class Rejection:
    """A request the emulated service refuses: HTTP status and the provider's error body."""

    status: int
    body: JsonObject


class Brain(Protocol):
    """Produces the canonical answer to a canonical request."""

    def respond(self, request: Request) -> Response | JsonObject | list[JsonObject]:
        """A canonical response, or (scripts) a raw wire response / list of stream events."""
        ...


_CALL_WORD = re.compile(r"\b(?:call|use|run)\s+([A-Za-z_][\w.-]*)")
_WITH = re.compile(r"\s+with\s+")
_ARGUMENTS = json.JSONDecoder()


def named_calls(text: str) -> list[tuple[str, str]]:
    """Every ``call NAME`` / ``use NAME`` / ``run NAME`` in ``text``, each with the JSON
    object that follows ``with`` (its exact text) or ``"{}"``, in order.

    Linear in the length of ``text``: the patterns have no nested or overlapping
    repetition, an argument object is read once by the JSON decoder and the scan resumes
    after it (a greedy ``\\{.*\\}`` would rescan the rest of the prompt at every match).
    """
    found: list[tuple[str, str]] = []
    position = 0
    while (match := _CALL_WORD.search(text, position)) is not None:
        position = match.end()
        arguments = "{}"
        joined = _WITH.match(text, position)
        if joined is not None and text.startswith("{", joined.end()):
            try:
                value, end = _ARGUMENTS.raw_decode(text, joined.end())
            except ValueError:
                value, end = None, position
            if isinstance(value, dict):
                arguments, position = text[joined.end() : end], end
        found.append((match.group(1), arguments))
    return found


@dataclass
class DefaultBrain:
    """Deterministic answers: names a tool → calls it; tool results → summarises them.

    * The last message holds tool results: answer ``"Done: <name> returned <text>"``.
    * The last user text says ``call NAME`` / ``use NAME`` (optionally ``with {json}``)
      and NAME is a declared tool: call it (``parallel`` calls when several are named).
    * Otherwise: echo ``"You said: <text>"``.
    * Under structured output (``json_object`` / ``json_schema``) the text is JSON instead:
      a small value valid against the schema (:func:`~._schema.example`), ``{}`` without one.

    Every answer starts with a reasoning summary, so reasoning travels on every hop.
    """

    reasoning: bool = True
    counter: int = 0
    call_prefix: str = "call"
    """Starts every call id; each emulator has its own, so ids are unique across services
    as real services' random ids are (a conversation switching models never sees two
    calls with one id)."""
    positional_ids: bool = False
    """Call ids are the call's position in its response (``"0"``, ``"1"``…), as OpenRouter
    and Novita send them: the same ids again in every turn and conversation."""

    def respond(self, request: Request) -> Response:
        self.counter += 1
        last = request.messages[-1] if request.messages else Message(role="user", parts=())
        results = [part for part in last.parts if isinstance(part, ToolResultPart)]
        parts: list[ReasoningPart | TextPart | ToolCallPart] = []
        if self.reasoning:
            parts.append(
                ReasoningPart(reasoning_kind="summary", text="Thinking about the request.")
            )
        if results:
            text = "; ".join(f"{r.name or r.call_id} returned {r.text}" for r in results)
            parts.append(TextPart(text=_structured(request) or f"Done: {text}"))
            return self._response(request, parts, "stop")
        calls = self._calls(request, last)
        if calls:
            parts.extend(calls)
            return self._response(request, parts, "tool_calls")
        parts.append(TextPart(text=_structured(request) or f"You said: {last.text}"))
        return self._response(request, parts, "stop")

    def _calls(self, request: Request, last: Message) -> list[ToolCallPart]:
        if last.role != "user" or (request.tool_choice and request.tool_choice.mode == "none"):
            return []
        declared = {tool.name for tool in request.tools}
        calls: list[ToolCallPart] = []
        for name, arguments in named_calls(last.text):
            if name in declared:
                call_id = f"{self.call_prefix}_{self.counter}_{len(calls) + 1}"
                if self.positional_ids:
                    call_id = str(len(calls))
                calls.append(ToolCallPart(call_id=call_id, name=name, arguments=arguments))
        return calls

    def _response(
        self,
        request: Request,
        parts: Sequence[ReasoningPart | TextPart | ToolCallPart],
        finish: str,
    ) -> Response:
        words = sum(len(m.text.split()) for m in request.messages) + 1
        out = sum(len(getattr(p, "text", "").split()) + 1 for p in parts)
        return Response(
            message=Message(role="assistant", parts=tuple(parts)),
            id=f"emu_{self.counter}",
            model=request.model,
            created=1_700_000_000 + self.counter,
            finish_reason="tool_calls" if finish == "tool_calls" else "stop",
            usage=Usage(input_tokens=words, output_tokens=out + 4, reasoning_tokens=4),
        )


def _structured(request: Request) -> str | None:
    """The answer's JSON text under structured output, else ``None``."""
    wanted = request.response_format
    if wanted is None or wanted.type == "text":
        return None
    if wanted.type == "json_object" or wanted.schema is None:
        return "{}"
    return json.dumps(example(wanted.schema))


class ScriptError(ValueError):
    """A script file is unreadable or malformed."""


@dataclass
class ScriptBrain:
    """Replays a script: a JSON list whose entries are answered in order.

    Each entry is ``{"response": <wire response>}`` (the dialect's non-streaming JSON),
    ``{"stream": [<wire event>, ...]}`` (the dialect's stream events, verbatim), or
    ``{"error": {"status": N, "body": <wire error>}}``. When the script runs out, the
    emulator answers with the default brain.
    """

    entries: list[JsonObject]
    fallback: DefaultBrain = field(default_factory=DefaultBrain)
    position: int = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptBrain:
        """Load a script file, naming the file in any error."""
        try:
            document = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ScriptError(f"{path}: {error}") from error
        if not isinstance(document, list):
            raise ScriptError(f"{path}: a script is a JSON list of entries")
        entries = cast(list[JsonValue], document)
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not ({"response", "stream", "error"} & entry.keys()):
                raise ScriptError(f"{path}: entry {index} needs 'response', 'stream' or 'error'")
        return cls(entries=[cast(JsonObject, entry) for entry in entries])

    def next_entry(self) -> JsonObject | None:
        """The next scripted entry, or ``None`` when the script is exhausted."""
        if self.position >= len(self.entries):
            return None
        entry = self.entries[self.position]
        self.position += 1
        return entry
