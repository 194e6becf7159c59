"""The closed union of message parts.

Every part is a small frozen dataclass with a literal ``kind`` tag and keyword-only
construction. Provider fields that the canonical model does not name are kept in
``extra``, keyed by dialect (``"openai-responses"``, ``"openai-chat"``, ``"gemini"``,
``"agui"``), so that a same-dialect round trip is exact. A codec reads only its own key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]
Extra: TypeAlias = Mapping[str, JsonObject]
"""Unknown provider fields, keyed by the dialect that produced them."""

ReasoningKind: TypeAlias = Literal["raw", "summary", "encrypted"]
ToolOwner: TypeAlias = Literal["local", "client", "hosted"]
ToolOutcome: TypeAlias = Literal["success", "failed", "denied", "interrupted"]


def _no_extra() -> Extra:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class Opaque:
    """An opaque payload a provider binds to a part, replayable only to its issuer.

    ``provider`` names the issuer family (``"openai"``, ``"google"``, ``"openrouter"``);
    ``format`` says exactly what ``data`` is, for example ``"responses.encrypted_content"``,
    ``"gemini.thought_signature"`` or ``"openrouter.reasoning_detail"``. ``data`` is the
    payload as received (a string for blobs and signatures, a JSON object for structured
    details such as an OpenRouter reasoning detail).
    """

    provider: str
    format: str
    data: JsonValue

    def is_from(self, provider: str, format: str | None = None) -> bool:
        """True when this payload was issued by ``provider`` (and in ``format``, if given)."""
        return self.provider == provider and (format is None or self.format == format)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A source the text cites: Responses ``url_citation`` annotations, Chat
    ``message.annotations``, Gemini grounding supports and citation sources, Anthropic
    text-block citations. ``start`` / ``end`` are character offsets into the part's text
    when the provider gave them (an Anthropic citation covers its whole block).

    ``url`` is the cited web page, or ``None`` when the source is a document the request
    supplied (Anthropic ``char_location`` / ``page_location`` / ``content_block_location``;
    ``title`` is then the document's title): only Anthropic can carry those, every other
    encoder drops them with ``citation_dropped``. Provider fields beyond these (Anthropic's
    ``encrypted_index``, Gemini's licence) stay in ``extra``."""

    url: str | None
    title: str | None = None
    start: int | None = None
    end: int | None = None
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenLogprob:
    """The log-probability of one generated token (Chat ``logprobs.content[]``, Responses
    ``output_text.logprobs[]``, Gemini ``logprobsResult.chosenCandidates[]``).

    ``bytes`` is the token's UTF-8 bytes when the provider gave them (OpenAI), ``token_id``
    its vocabulary id (Gemini). ``top`` are the most likely tokens at this position, most
    likely first (Chat/Responses ``top_logprobs``, Gemini ``topCandidates[i].candidates``);
    their own ``top`` is always empty."""

    token: str
    logprob: float
    bytes: tuple[int, ...] | None = None
    token_id: int | None = None
    top: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Plain text. ``signature`` is set when the provider signed this exact part;
    ``citations`` are the web sources it cites (in the provider's order); ``logprobs``
    the log-probabilities of its tokens, in order, when the client asked for them."""

    kind: Literal["text"] = "text"
    text: str
    signature: Opaque | None = None
    item_id: str | None = None
    citations: tuple[Citation, ...] = ()
    logprobs: tuple[TokenLogprob, ...] = ()
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalPart:
    """A model refusal (Responses ``refusal`` content, Chat ``message.refusal``)."""

    kind: Literal["refusal"] = "refusal"
    text: str
    item_id: str | None = None
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningPart:
    """One piece of model reasoning.

    ``kind`` says what ``text`` is: ``raw`` chain of thought, a ``summary`` of it, or
    ``encrypted`` (no readable text; the reasoning lives in ``opaque``). Pieces of one
    provider reasoning item share ``item_id`` and stay adjacent and in order.
    """

    kind: Literal["reasoning"] = "reasoning"
    reasoning_kind: ReasoningKind
    text: str = ""
    opaque: Opaque | None = None
    item_id: str | None = None
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallPart:
    """A model's request to call a tool.

    ``call_id`` is the provider's wire id (it can be reused across turns);
    ``occurrence_id`` is minted by Interlock, unique forever, and what everything
    correlates on (``None`` until a loop or store assigns it). ``arguments`` is the
    original JSON text, byte for byte; :attr:`parsed_arguments` is the parsed view.
    ``server_label`` is set only together with ``owner == "hosted"``.
    """

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: str = ""
    occurrence_id: str | None = None
    owner: ToolOwner = "local"
    server_label: str | None = None
    signature: Opaque | None = None
    item_id: str | None = None
    extra: Extra = field(default_factory=_no_extra)

    @property
    def parsed_arguments(self) -> JsonValue:
        """The arguments parsed as JSON (``{}`` for empty text); raises ``ValueError``."""
        if not self.arguments.strip():
            return {}
        return json.loads(self.arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonPart:
    """A structured JSON value (tool output objects, Gemini ``functionResponse.response``)."""

    kind: Literal["json"] = "json"
    value: JsonValue
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaPart:
    """Inline (base64 ``data``) or referenced (``uri``) media. Exactly one of the two is set."""

    kind: Literal["media"] = "media"
    media_type: str | None = None
    data: str | None = None
    uri: str | None = None
    filename: str | None = None
    extra: Extra = field(default_factory=_no_extra)


OutputPart: TypeAlias = TextPart | JsonPart | MediaPart
"""What a tool result may contain."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultPart:
    """The terminal result of one tool call occurrence.

    A denial is data: ``outcome == "denied"`` with a text explaining it.
    """

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    output: tuple[OutputPart, ...] = ()
    outcome: ToolOutcome = "success"
    occurrence_id: str | None = None
    name: str | None = None
    item_id: str | None = None
    extra: Extra = field(default_factory=_no_extra)

    @property
    def is_error(self) -> bool:
        """True for any outcome other than success."""
        return self.outcome != "success"

    @property
    def text(self) -> str:
        """The output flattened to text: text parts verbatim, JSON values serialized."""
        pieces: list[str] = []
        for part in self.output:
            if isinstance(part, TextPart):
                pieces.append(part.text)
            elif isinstance(part, JsonPart):
                pieces.append(json.dumps(part.value, separators=(",", ":"), ensure_ascii=False))
        return "".join(pieces)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequestPart:
    """A control-plane request for a human decision on ``call`` (never model transcript)."""

    kind: Literal["approval_request"] = "approval_request"
    approval_id: str
    call: ToolCallPart
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalResponsePart:
    """A human decision on an approval request.

    ``edited_arguments`` (JSON text) is an explicit "approve with edits"; it is only
    meaningful with ``approved``. ``remember`` (only with ``approved``) also makes a
    standing rule for later calls in the same thread: ``"tool"`` approves every later
    call of this tool, ``"arguments"`` later calls with exactly these arguments.
    """

    kind: Literal["approval_response"] = "approval_response"
    approval_id: str
    approved: bool
    reason: str | None = None
    edited_arguments: str | None = None
    remember: Literal["tool", "arguments"] | None = None
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequestPart:
    """A tool's request for user input; the loop pauses until it is answered."""

    kind: Literal["input_request"] = "input_request"
    request_id: str
    occurrence_id: str
    call_id: str
    prompt: str
    response_schema: JsonObject | None = None
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class InputResponsePart:
    """The user's answer to an :class:`InputRequestPart`."""

    kind: Literal["input_response"] = "input_response"
    request_id: str
    value: JsonValue
    extra: Extra = field(default_factory=_no_extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class HostedToolPart:
    """A service-executed tool item the canonical model carries verbatim.

    Examples: Responses ``mcp_call``, ``mcp_list_tools``, ``web_search_call``, ``compaction``,
    ``program``. ``item`` is the provider's JSON item, unchanged; ``provider`` and
    ``item_type`` say whose it is, so another dialect can refuse or drop it explicitly.
    """

    kind: Literal["hosted_tool"] = "hosted_tool"
    provider: str
    item_type: str
    item: JsonObject
    server_label: str | None = None
    extra: Extra = field(default_factory=_no_extra)


Part: TypeAlias = (
    TextPart
    | RefusalPart
    | ReasoningPart
    | ToolCallPart
    | ToolResultPart
    | JsonPart
    | MediaPart
    | ApprovalRequestPart
    | ApprovalResponsePart
    | InputRequestPart
    | InputResponsePart
    | HostedToolPart
)
"""Every kind of part a message can hold."""

CONTROL_PART_TYPES = (
    ApprovalRequestPart,
    ApprovalResponsePart,
    InputRequestPart,
    InputResponsePart,
)
"""Control-plane parts: surfaced to callers, never sent to a model as transcript."""
