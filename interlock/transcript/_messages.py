"""Messages, requests and responses of the provider-neutral transcript."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from interlock.transcript._parts import (
    JsonObject,
    Part,
    ToolCallPart,
    ToolResultPart,
)

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
FinishReason: TypeAlias = Literal[
    "stop", "length", "tool_calls", "content_filter", "refusal", "error", "other"
]


def _no_extra() -> Mapping[str, JsonObject]:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One turn of a conversation: a role and its ordered parts."""

    role: Role
    parts: tuple[Part, ...]
    id: str | None = None
    name: str | None = None
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)

    @property
    def text(self) -> str:
        """The concatenated text of the message's text parts."""
        from interlock.transcript._parts import TextPart

        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        """The tool call parts, in order."""
        return tuple(part for part in self.parts if isinstance(part, ToolCallPart))

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        """The tool result parts, in order."""
        return tuple(part for part in self.parts if isinstance(part, ToolResultPart))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A function tool offered to the model.

    ``owner`` is ``local`` for tools Interlock executes and ``client`` for tools a
    frontend executes (declaration only).
    """

    name: str
    description: str | None = None
    parameters: JsonObject | None = None
    strict: bool | None = None
    owner: Literal["local", "client"] = "local"
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class HostedToolSpec:
    """A provider-hosted tool declaration (web search, MCP server, …), carried verbatim."""

    provider: str
    spec: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolChoice:
    """Which tools the model may or must call.

    ``mode`` ``required`` with one name forces that function; with several names it
    restricts the choice to them (``allowed_tools`` / Gemini ``allowedFunctionNames``).
    """

    mode: Literal["auto", "none", "required"] = "auto"
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GenerationOptions:
    """Sampling, reasoning and attribution options shared by two or more dialects.

    Each option is carried to every dialect with a field for it; a dialect without one
    gets an ``option_dropped`` warning. ``user`` is the end-user identifier (Anthropic
    ``metadata.user_id``); ``metadata`` the string-valued tags OpenAI stores with a call.
    ``candidate_count`` asks for several candidates (:attr:`Response.alternatives`),
    ``logprobs`` for the log-probabilities of the chosen tokens and ``top_logprobs`` for
    that many most likely tokens at each position (:attr:`TextPart.logprobs`).
    """

    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    max_output_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    user: str | None = None
    metadata: JsonObject | None = None
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    include_reasoning: bool | None = None
    thinking_budget: int | None = None
    candidate_count: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseFormat:
    """Structured output: what shape the model's answer must have.

    ``type`` ``text`` is free text, ``json_object`` any JSON object, ``json_schema`` an
    answer valid against ``schema``. ``schema_dialect`` says which schema language
    ``schema`` is written in: ``json_schema`` (OpenAI ``json_schema``, Gemini
    ``responseJsonSchema``) or ``openapi`` (Gemini ``responseSchema``, the OpenAPI 3.0
    subset with upper-case type names). ``name`` / ``description`` / ``strict`` are OpenAI's
    schema metadata; Gemini has no field for them.
    """

    type: Literal["text", "json_object", "json_schema"]
    schema: JsonObject | None = None
    schema_dialect: Literal["json_schema", "openapi"] = "json_schema"
    name: str | None = None
    description: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Continuation:
    """Service-side state (Responses ``store`` / ``previous_response_id`` / ``conversation``)."""

    store: bool | None = None
    previous_response_id: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A model request in canonical form.

    System and developer instructions are messages; a dialect with a dedicated
    instruction slot (Responses ``instructions``, Gemini ``systemInstruction``) maps its
    leading system messages there.
    """

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    hosted_tools: tuple[HostedToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    stream: bool = False
    options: GenerationOptions = field(default_factory=GenerationOptions)
    continuation: Continuation = field(default_factory=Continuation)
    response_format: ResponseFormat | None = None
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token accounting. ``output_tokens`` includes ``reasoning_tokens`` (OpenAI's convention)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    tool_prompt_tokens: int = 0
    breakdown: tuple[ModelUsage, ...] = ()
    """Per-model usage of a service that ran several models for one answer (Groq's compound
    systems: ``usage_breakdown``); the counts above are the whole answer's."""
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)

    @property
    def total_tokens(self) -> int:
        """Input plus output (reasoning is already inside output)."""
        return self.input_tokens + self.output_tokens + self.tool_prompt_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUsage:
    """One model's share of an answer's :class:`Usage` (an entry of ``Usage.breakdown``)."""

    model: str
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class Alternative:
    """Another candidate answer to the same request (Chat ``choices[i]``, Gemini
    ``candidates[i]``, ``i >= 1``): its message and how it ended. ``extra`` keeps its
    dialect's candidate fields, as ``Response.extra`` does for the first."""

    message: Message
    finish_reason: FinishReason | None = None
    native_finish_reason: str | None = None
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    """A complete model response: one assistant message plus metadata.

    ``native_finish_reason`` keeps the provider's own value (``SAFETY``, ``UNEXPECTED_TOOL_CALL``,
    ``max_output_tokens``…) so nothing collapses silently into ``finish_reason``.
    ``message`` is the first candidate; ``alternatives`` the others, in the provider's
    order (candidate ``i`` is ``alternatives[i - 1]``), when the client asked for several.
    """

    message: Message
    id: str | None = None
    model: str | None = None
    created: int | None = None
    finish_reason: FinishReason | None = None
    native_finish_reason: str | None = None
    usage: Usage | None = None
    alternatives: tuple[Alternative, ...] = ()
    extra: Mapping[str, JsonObject] = field(default_factory=_no_extra)
