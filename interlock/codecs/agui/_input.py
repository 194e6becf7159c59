"""Decoding a ``RunAgentInput`` (the body of ``POST /agui/{agent}`` or a WebSocket run frame)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ag_ui.core import RunAgentInput, Tool
from pydantic import ValidationError

from interlock.codecs.agui._approvals import decode_resume_entry
from interlock.codecs.agui._messages_in import SealContext, decode_messages
from interlock.codecs.agui._wire import DIALECT, without_none
from interlock.transcript import (
    ApprovalResponsePart,
    DecodeError,
    InputResponsePart,
    JsonObject,
    JsonValue,
    Message,
    ToolSpec,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEntry:
    """One ``RunAgentInput.context`` item: a description and its value, both text."""

    description: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInput:
    """A decoded ``RunAgentInput``.

    ``messages`` is the client's history in canonical form (not trusted: the gateway
    reconciles it against the thread it owns). ``tools`` are the frontend tools, each
    ``owner="client"``. ``resume`` holds the answers to interrupts, in request order.
    ``state`` and ``forwarded_props`` are ``None`` when absent (never trusted for identity).
    """

    thread_id: str
    run_id: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    resume: tuple[ApprovalResponsePart | InputResponsePart, ...] = ()
    state: JsonValue = None
    context: tuple[ContextEntry, ...] = ()
    forwarded_props: JsonValue = None
    parent_run_id: str | None = None
    protocol_version: str | None = None


def decode_run_input(
    payload: JsonValue, *, seal_key: bytes | None = None, tenant: str = ""
) -> RunInput:
    """Validate and decode a ``RunAgentInput``.

    Raises :class:`DecodeError` naming the offending path (``messages[2].toolCallId``) for
    malformed input, and ``SealError`` (with its ``path``) when a sealed
    ``encryptedValue`` was altered, truncated or issued to another tenant or key.
    """
    if not isinstance(payload, dict):
        raise DecodeError("", "a RunAgentInput is a JSON object")
    try:
        model = RunAgentInput.model_validate(payload)
    except ValidationError as error:
        raise _decode_error(payload, error) from None
    tools = _decode_tools(model.tools or [])
    client_tools = {tool.name for tool in tools}
    seals = SealContext(key=seal_key, tenant=tenant)
    resume_entries = model.resume or []
    _refuse_duplicates([entry.interrupt_id for entry in resume_entries], "resume", "interruptId")
    return RunInput(
        thread_id=model.thread_id,
        run_id=model.run_id,
        messages=decode_messages(model.messages, seals, client_tools),
        tools=tools,
        resume=tuple(
            decode_resume_entry(entry, f"resume[{index}]")
            for index, entry in enumerate(resume_entries)
        ),
        state=cast(JsonValue, model.state),
        context=tuple(
            ContextEntry(description=item.description, value=item.value)
            for item in model.context or []
        ),
        forwarded_props=cast(JsonValue, model.forwarded_props),
        parent_run_id=model.parent_run_id,
        protocol_version=model.protocol_version,
    )


def _decode_tools(tools: Sequence[Tool]) -> tuple[ToolSpec, ...]:
    _refuse_duplicates([tool.name for tool in tools], "tools", "name")
    specs: list[ToolSpec] = []
    for index, tool in enumerate(tools):
        parameters = cast(JsonValue, tool.parameters)
        if parameters is not None and not isinstance(parameters, dict):
            raise DecodeError(f"tools[{index}].parameters", "must be a JSON Schema object")
        own = without_none({"metadata": cast(JsonValue, tool.metadata)})
        specs.append(
            ToolSpec(
                name=tool.name,
                description=tool.description,
                parameters=parameters,
                owner="client",
                extra={DIALECT: own} if own else {},
            )
        )
    return tuple(specs)


def _refuse_duplicates(values: Sequence[str], field: str, key: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise DecodeError(f"{field}[{index}].{key}", f"duplicate {key} {value!r}")
        seen.add(value)


def _decode_error(payload: JsonObject, error: ValidationError) -> DecodeError:
    """The most specific validation failure as a :class:`DecodeError` with a wire path.

    Pydantic locations include union branch labels (``'user'``, ``'str'``…); those are
    skipped by walking the payload itself, so the path names only real keys and indexes.
    """
    deepest = max(error.errors(), key=lambda item: len(item["loc"]))
    return DecodeError(_wire_path(payload, deepest["loc"]), deepest["msg"])


def _wire_path(payload: JsonValue, location: Sequence[int | str]) -> str:
    path = ""
    node: JsonValue = payload
    for position, step in enumerate(location):
        last = position == len(location) - 1
        if isinstance(step, int) and isinstance(node, list) and 0 <= step < len(node):
            path, node = f"{path}[{step}]", node[step]
        elif isinstance(step, str) and isinstance(node, dict) and step in node:
            path, node = _join(path, step), node[step]
        elif last and isinstance(node, dict):
            path = _join(path, str(step))
    return path


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
