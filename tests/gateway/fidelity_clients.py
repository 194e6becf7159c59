"""What a client of each dialect sees of one answer, read with its official SDK.

:func:`seen` sends one user message (and optionally one function tool) through a running
``interlock serve`` with the ``openai`` (Chat Completions, Responses), ``google-genai`` or
``anthropic`` SDK, streamed or not, and reduces the SDK's own objects to a :class:`Seen`:
the fields every dialect has, in that dialect's own vocabulary, so a test can say what each
client must get and that the streamed and the whole answer agree. Streams are put together
by the SDKs' own accumulators where they have one (``openai``'s ``.stream()`` helpers,
``anthropic``'s ``get_final_message``); google-genai's chunks are joined as its users do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic
from google import genai
from google.genai import types
from openai import ContentFilterFinishReasonError, OpenAI

TOOL_NAME = "llm_version"
DIALECTS = ("chat", "responses", "gemini", "anthropic")
ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})


@dataclass
class Seen:
    """One answer as its client read it.

    ``finish`` is the dialect's own: Chat ``finish_reason``; Responses ``status`` (with
    ``/reason`` when incomplete); Gemini ``finishReason`` (or the prompt's ``blockReason``);
    Anthropic ``stop_reason``. ``calls`` are ``(name, arguments)``; ``call_ids`` apart, as
    ids may be given by the gateway. ``item_types`` are the Responses output items, the
    Anthropic content blocks, or the Gemini part kinds (a run of one kind once). ``label`` is the ``interlock`` translation the answer
    itself carries (``None`` when it carries none).
    """

    text: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=lambda: [])
    call_ids: list[str] = field(default_factory=lambda: [])
    finish: str | None = None
    usage: tuple[int, int] | None = None
    response_id: str | None = None
    model: str | None = None
    label: str | None = None
    item_types: list[str] = field(default_factory=lambda: [])


def seen(dialect: str, url: str, model: str, stream: bool, tool: bool = False) -> Seen:
    """The answer to ``"hello"`` (with the :data:`TOOL_NAME` tool declared when ``tool``)."""
    readers = {"chat": _chat, "responses": _responses, "gemini": _gemini, "anthropic": _anthropic}
    return readers[dialect](url, model, stream, tool)


def _label(extra: dict[str, Any] | None) -> str | None:
    member = (extra or {}).get("interlock")
    return member["translation"] if isinstance(member, dict) else None


def _chat(url: str, model: str, stream: bool, tool: bool) -> Seen:
    messages: Any = [{"role": "user", "content": "hello"}]
    tools: Any = (
        [{"type": "function", "function": {"name": TOOL_NAME, "parameters": {"type": "object"}}}]
        if tool
        else []
    )
    options: Any = {"tools": tools} if tool else {}
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        if stream:
            with client.chat.completions.stream(
                model=model,
                messages=messages,
                stream_options={"include_usage": True},
                **options,
            ) as events:
                labels = [
                    _label(event.chunk.model_extra)
                    for event in events
                    if event.type == "chunk" and event.chunk.choices
                    if event.chunk.choices[0].finish_reason
                ]
                try:
                    completion: Any = events.get_final_completion()
                except ContentFilterFinishReasonError:  # the helper refuses to parse it
                    completion = events.current_completion_snapshot
            label = labels[-1] if labels else None
        else:
            completion = client.chat.completions.create(model=model, messages=messages, **options)
            label = _label(completion.model_extra)
    choice = completion.choices[0]
    calls = choice.message.tool_calls or []
    usage = completion.usage
    return Seen(
        text=choice.message.content or "",
        calls=[(c.function.name, json.loads(c.function.arguments or "{}")) for c in calls],
        call_ids=[c.id for c in calls],
        finish=choice.finish_reason,
        usage=(usage.prompt_tokens, usage.completion_tokens) if usage else None,
        response_id=completion.id,
        model=completion.model,
        label=label,
    )


def _responses(url: str, model: str, stream: bool, tool: bool) -> Seen:
    tools: Any = (
        [{"type": "function", "name": TOOL_NAME, "parameters": {"type": "object"}}] if tool else []
    )
    options: Any = {"tools": tools} if tool else {}
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        if stream:
            # The helper's get_final_response() wants response.completed; an answer that
            # ends incomplete or failed ends with its own event, which holds the response.
            with client.responses.stream(model=model, input="hello", **options) as events:
                ends = [event.response for event in events if event.type in ENDS]
            assert len(ends) == 1, ends
            response: Any = ends[0]
        else:
            response = client.responses.create(model=model, input="hello", **options)
    calls = [item for item in response.output if item.type == "function_call"]
    status = response.status
    if status == "incomplete" and response.incomplete_details is not None:
        status = f"incomplete/{response.incomplete_details.reason}"
    usage = response.usage
    return Seen(
        text=response.output_text,
        calls=[(c.name, json.loads(c.arguments or "{}")) for c in calls],
        call_ids=[c.call_id for c in calls],
        finish=status,
        usage=(usage.input_tokens, usage.output_tokens) if usage else None,
        response_id=response.id,
        model=response.model,
        label=_label(response.model_extra),
        item_types=[item.type for item in response.output],
    )


def _gemini_chunks(url: str, model: str, stream: bool, tool: bool) -> list[Any]:
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    declaration = types.FunctionDeclaration(
        name=TOOL_NAME, parameters_json_schema={"type": "object"}
    )
    config = (
        types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declaration])])
        if tool
        else None
    )
    if stream:
        return list(
            client.models.generate_content_stream(model=model, contents="hello", config=config)
        )
    return [client.models.generate_content(model=model, contents="hello", config=config)]


def _gemini(url: str, model: str, stream: bool, tool: bool) -> Seen:
    chunks = _gemini_chunks(url, model, stream, tool)
    out = Seen()
    for chunk in chunks:
        candidate = chunk.candidates[0] if chunk.candidates else None
        parts = candidate.content.parts if candidate and candidate.content else None
        for part in parts or []:
            kind = _kind(part)
            if kind is not None and out.item_types[-1:] != [kind]:
                out.item_types.append(kind)  # a kind streamed in several chunks counts once
            if part.text and not part.thought:
                out.text += part.text
            if part.function_call is not None:
                out.calls.append((part.function_call.name, part.function_call.args or {}))
                out.call_ids.append(part.function_call.id or "")
        if candidate is not None and candidate.finish_reason is not None:
            out.finish = candidate.finish_reason.value
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            out.finish = f"blocked/{feedback.block_reason.value}"
        metadata = chunk.usage_metadata
        if metadata is not None and metadata.prompt_token_count is not None:
            output = (metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0)
            out.usage = (metadata.prompt_token_count, output)
        out.response_id = chunk.response_id or out.response_id
        out.model = chunk.model_version or out.model
        status = chunk.model_status.message if chunk.model_status else None
        if status and "interlock: " in status:
            out.label = status[status.rindex("interlock: ") + len("interlock: ") :]
    return out


def _kind(part: types.Part) -> str | None:
    """A part's kind as the wire names it (``text``, ``executableCode``…)."""
    for name, kind in (
        ("executable_code", "executableCode"),
        ("code_execution_result", "codeExecutionResult"),
        ("function_call", "functionCall"),
        ("tool_call", "toolCall"),
        ("tool_response", "toolResponse"),
    ):
        if getattr(part, name) is not None:
            return kind
    if part.thought:
        return "thought"
    return "text" if part.text else None


def _anthropic(url: str, model: str, stream: bool, tool: bool) -> Seen:
    messages: Any = [{"role": "user", "content": "hello"}]
    tools: Any = [{"name": TOOL_NAME, "input_schema": {"type": "object"}}] if tool else []
    options: Any = {"tools": tools} if tool else {}
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        if stream:
            with client.messages.stream(
                model=model, max_tokens=256, messages=messages, **options
            ) as events:
                labels = [
                    _label(event.model_extra) for event in events if event.type == "message_delta"
                ]
                message: Any = events.get_final_message()
            label = labels[-1] if labels else None
        else:
            message = client.messages.create(
                model=model, max_tokens=256, messages=messages, **options
            )
            label = _label(message.model_extra)
    calls = [block for block in message.content if block.type == "tool_use"]
    return Seen(
        text="".join(block.text for block in message.content if block.type == "text"),
        calls=[(c.name, c.input) for c in calls],
        call_ids=[c.id for c in calls],
        finish=message.stop_reason,
        usage=(message.usage.input_tokens, message.usage.output_tokens),
        response_id=message.id,
        model=message.model,
        label=label,
        item_types=[block.type for block in message.content],
    )
