"""Which kept wire fields may be sent again, and to which upstream.

Decoding keeps every field the codec does not model in ``extra[DIALECT]`` of the request,
message, tool call, response or usage it came with. With ``reasoning_dialect=None`` (*as
decoded*) every kept field goes back, which makes same-dialect round trips exact. When a
reasoning dialect is named, the fields go to a known kind of upstream and each kept key is
decided on its own (:func:`admits`):

1. A field only responses have is never sent in a request: ``annotations`` on an assistant
   message, ``index`` on a tool call.
2. A vendor field (:data:`VENDOR_KEYS`: OpenRouter's ``reasoning`` / ``provider`` /
   ``usage`` request options, DeepSeek's ``thinking``, vLLM's ``chat_template_kwargs``,
   Gemini-compat's ``extra_body`` / ``extra_content``, the reasoning carriers…) goes only
   to its own dialect. A reasoning carrier kept as a field holding text is sent only as
   OpenRouter's flat ``reasoning`` rendering next to its ``reasoning_details``; elsewhere
   it would relabel reasoning the parts already place (a summary is not raw text).
3. Plain OpenAI (``none``) receives only the fields its API declares (:data:`OPENAI_KEYS`,
   the SDK 3.57 types): it rejects anything else.
4. Any other field goes to the OpenAI-compatible upstreams, whose extensions the codec
   cannot list.

A request field dropped this way is reported as a ``field_dropped`` warning at
``<location>.extra.<key>`` unless it carried nothing (``null``, empty) or is positional
(a tool call's ``index``). Responses have no warnings channel: there the rules apply
silently. Content parts and tool declarations keep their fields everywhere (they only
hold OpenAI's own: ``detail``, ``strict``, a custom tool's ``format``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._wire import DIALECT, ReasoningDialect
from interlock.transcript import JsonObject, JsonValue

Scope: TypeAlias = Literal[
    "request",
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "tool_call",
    "response",
    "choice",
    "response_message",
    "usage",
]
"""The wire object a kept field belongs to (a request message's scope is its role)."""


def _keys(names: str) -> frozenset[str]:
    return frozenset(names.split())


_INSTRUCTION = frozenset({"role", "content", "name"})
_ASSISTANT = frozenset(
    {"role", "content", "refusal", "name", "audio", "tool_calls", "function_call"}
)

OPENAI_KEYS: dict[Scope, frozenset[str]] = {
    "request": _keys(
        "audio frequency_penalty function_call functions logit_bias logprobs "
        "max_completion_tokens max_tokens messages metadata modalities model moderation "
        "n parallel_tool_calls prediction presence_penalty prompt_cache_key "
        "prompt_cache_options prompt_cache_retention reasoning_effort response_format "
        "safety_identifier seed service_tier stop store stream stream_options "
        "temperature tool_choice tools top_logprobs top_p user verbosity "
        "web_search_options"
    ),
    "system": _INSTRUCTION,
    "developer": _INSTRUCTION,
    "user": _INSTRUCTION,
    "assistant": _ASSISTANT,
    "tool": frozenset({"role", "content", "tool_call_id"}),
    "tool_call": frozenset({"id", "type", "function", "custom", "index"}),
    "response": _keys(
        "id object created model choices usage metadata moderation service_tier "
        "system_fingerprint obfuscation"
    ),
    "choice": frozenset({"index", "message", "delta", "finish_reason", "logprobs"}),
    "response_message": (_ASSISTANT - {"name"}) | {"annotations"},
    "usage": _keys(
        "prompt_tokens completion_tokens total_tokens prompt_tokens_details "
        "completion_tokens_details"
    ),
}
"""The fields OpenAI declares per object (``openai`` 3.57 request params and models)."""

_OPENROUTER_REQUEST = _keys(
    "reasoning include_reasoning provider models route transforms plugins usage"
)
_DEEPSEEK_MESSAGE = frozenset({"reasoning_content", "prefix"})
_VLLM_MESSAGE = frozenset({"reasoning"})
_OPENROUTER_MESSAGE = frozenset({"reasoning", "reasoning_details"})
_GEMINI_EXTRA = frozenset({"extra_content"})

VENDOR_KEYS: dict[ReasoningDialect, dict[Scope, frozenset[str]]] = {
    "none": {},
    "reasoning_content": {
        "request": frozenset({"thinking"}),
        "assistant": _DEEPSEEK_MESSAGE,
        "response_message": _DEEPSEEK_MESSAGE,
        "usage": frozenset({"prompt_cache_hit_tokens", "prompt_cache_miss_tokens"}),
    },
    "reasoning": {
        "request": frozenset({"chat_template_kwargs", "include_reasoning"}),
        "assistant": _VLLM_MESSAGE,
        "response_message": _VLLM_MESSAGE,
        "response": frozenset({"prompt_logprobs", "kv_transfer_params"}),
        "choice": frozenset({"stop_reason"}),
    },
    "openrouter": {
        "request": _OPENROUTER_REQUEST,
        "assistant": _OPENROUTER_MESSAGE,
        "response_message": _OPENROUTER_MESSAGE,
        "response": frozenset({"provider"}),
        "choice": frozenset({"native_finish_reason"}),
        "usage": frozenset({"cost", "is_byok", "cost_details"}),
    },
    "gemini-compat": {
        "request": frozenset({"extra_body"}),
        "assistant": _GEMINI_EXTRA,
        "response_message": _GEMINI_EXTRA,
        "tool_call": _GEMINI_EXTRA,
    },
}
"""Fields each reasoning dialect's upstreams define beyond OpenAI's (provider-wire.md §2.3)."""

_RESPONSE_ONLY: dict[Scope, frozenset[str]] = {
    "assistant": frozenset({"annotations"}),
    "tool_call": frozenset({"index"}),
}
_SILENT = frozenset({"index"})
_EMPTY: tuple[JsonValue, ...] = (None, "", [], {})
_CARRIERS = frozenset({"reasoning_content", "reasoning", "reasoning_details"})


def admits(
    scope: Scope, key: str, value: JsonValue, dialect: ReasoningDialect, *, request: bool
) -> bool:
    """True when the kept field ``key`` may be sent to an upstream of ``dialect``."""
    if request and key in _RESPONSE_ONLY.get(scope, ()):
        return False
    owners = [name for name, table in VENDOR_KEYS.items() if key in table.get(scope, ())]
    if owners:
        if dialect not in owners:
            return False
        # Text under a carrier's name only as OpenRouter's flat rendering of its details.
        rendering = dialect == "openrouter" and key == "reasoning"
        return key not in _CARRIERS or not value or rendering
    if dialect == "none":
        return key in OPENAI_KEYS[scope]
    return True


@dataclass(frozen=True, slots=True)
class FieldPolicy:
    """The field rules of one encode: its target dialect, and where drops are reported."""

    dialect: ReasoningDialect | None
    request: bool
    degrade: Degradations | None = None

    def kept(
        self, extra: Mapping[str, JsonObject], scope: Scope, location: str
    ) -> Mapping[str, JsonObject]:
        """``extra`` with this codec's kept fields reduced to those the target admits."""
        unknown = extra.get(DIALECT)
        if self.dialect is None or not unknown:
            return extra
        admitted: JsonObject = {}
        for key, value in unknown.items():
            if admits(scope, key, value, self.dialect, request=self.request):
                admitted[key] = value
            elif self.degrade is not None and value not in _EMPTY and key not in _SILENT:
                where = f"{location}.extra.{key}" if location else f"extra.{key}"
                message = f"field {key!r} is not valid for a {self.dialect!r} upstream"
                self.degrade.drop("field_dropped", where, message)
        if len(admitted) == len(unknown):
            return extra
        out = {name: value for name, value in extra.items() if name != DIALECT}
        if admitted:
            out[DIALECT] = admitted
        return out


AS_DECODED = FieldPolicy(dialect=None, request=False)
"""Every kept field goes back (same-dialect round trips)."""
