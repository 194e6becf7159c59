"""The codec registry the runner checks: each dialect's functions behind one small record.

The runner never imports a codec itself; it receives a :data:`Registry` (dialect name → codec
record), so a test can substitute a double (a codec that drops a signature must be caught).
:func:`default_registry` builds the real one from ``interlock.codecs``; a dialect whose package
does not export the codec contract yet is reported as unavailable, never skipped silently.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, TypeAlias

from interlock.codecs._sse import SseEvent
from interlock.codecs.registry import DIALECT_NAMES, DialectName, http_facts, package
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    OPAQUE_FORMATS,
    OPENAI_ENCRYPTED_CONTENT,
    OPENROUTER_REASONING_DETAIL,
    Encoded,
    JsonObject,
    JsonValue,
    Message,
    Opaque,
    ReplayPolicy,
    Request,
    Response,
    TranslationWarning,
    Update,
)

OPENAI_ENCRYPTED = OPENAI_ENCRYPTED_CONTENT
GEMINI_SIGNATURE = GEMINI_THOUGHT_SIGNATURE
OPENROUTER_DETAIL = OPENROUTER_REASONING_DETAIL


class StreamDecoderLike(Protocol):
    """The stream decoder half of the codec contract."""

    def feed(self, event: SseEvent) -> list[Update]:
        """Updates for one wire event."""
        ...

    def finish(self) -> list[Update]:
        """Updates still held when the stream ends."""
        ...


class StreamEncoderLike(Protocol):
    """The stream encoder half of the codec contract."""

    def encode(self, update: Update) -> list[SseEvent]:
        """Wire events for one update."""
        ...

    def finish(self) -> list[SseEvent]:
        """Wire events still held when the updates end."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One way of encoding into a dialect, e.g. Chat with the OpenRouter reasoning dialect.

    ``carries`` lists the opaque formats this target replays to their issuer; every other
    opaque payload must be dropped with a warning or refused. ``vendor_keys`` are wire keys
    the official SDK types do not declare but this target deliberately sends (removed
    before the SDK validation, and only those).
    """

    name: str
    dialect: str
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    carries: frozenset[str] = frozenset()
    vendor_keys: frozenset[str] = frozenset()
    stream_options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Extra stream-encoder options (Chat: emit the usage chunk, as with ``include_usage``)."""
    one_text_stream: bool = False
    """The target has one text channel (Chat's response ``content`` string and its stream's
    ``delta.content``): the text parts of a message arrive as one text, their concatenation
    in order, by the format's definition."""

    def carries_opaque(self, opaque: Opaque) -> bool:
        """True when this target is the issuer (or issuer's carrier) of ``opaque``."""
        return opaque.format in self.carries


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderCodec:
    """A provider dialect's codec functions (the contract of ``interlock.codecs.<dialect>``)."""

    name: str
    dialect: str
    decode_request: Callable[..., Request]
    encode_request: Callable[..., Encoded]
    decode_response: Callable[[JsonObject], Response]
    encode_response: Callable[..., JsonObject]
    stream_decoder: Callable[[], StreamDecoderLike]
    stream_encoder: Callable[..., StreamEncoderLike]
    targets: tuple[Target, ...]
    sdk_checks: bool = True
    """Validate encoded payloads against the official SDK types (off only for test doubles)."""
    spelling: Callable[[JsonValue], JsonValue] | None = None
    """The dialect's one spelling of field names (Gemini: camelCase for input sent in either
    spelling); same-dialect round trips of recorded payloads are compared in it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AguiCodec:
    """The AG-UI codec as the runner uses it.

    ``decode_run_input`` turns a ``RunAgentInput`` body into transcript messages;
    ``encode_messages`` turns transcript messages into AG-UI messages (the
    ``MESSAGES_SNAPSHOT`` / ``RunAgentInput.messages`` shape, opaque values sealed);
    ``encode_events`` turns one response into the events of one run (``run`` holds
    ``threadId`` / ``runId`` and any run-level facts). ``encode_messages_warned``, when
    the codec has it, is ``encode_messages`` plus the warnings for what it did not carry.
    """

    name: str
    decode_run_input: Callable[[JsonObject], tuple[Message, ...]]
    encode_messages: Callable[[Sequence[Message]], list[JsonObject]]
    encode_events: Callable[[Response, JsonObject], list[JsonObject]]
    target: Target
    encode_messages_warned: (
        Callable[[Sequence[Message]], tuple[list[JsonObject], tuple[TranslationWarning, ...]]]
        | None
    ) = None

    def render(
        self, messages: Sequence[Message]
    ) -> tuple[list[JsonObject], tuple[TranslationWarning, ...]]:
        """AG-UI messages for ``messages`` and the warnings of that rendering (if reported)."""
        if self.encode_messages_warned is None:
            return self.encode_messages(messages), ()
        return self.encode_messages_warned(messages)


Codec: TypeAlias = ProviderCodec | AguiCodec
Registry: TypeAlias = Mapping[str, Codec]
"""Vector dialect name (``openai_responses``, ``openai_chat``, ``gemini``, ``agui``) → codec."""

_CHAT_STREAM = {"include_usage": True}
_EXECUTED = "executed_tools"
"""Groq's server-side tool runs: an OpenAI-compatible upstream (any dialect but plain OpenAI)
gets them back on the assistant message, as the Chat codec keeps any vendor field."""
_CHAT_REASONING_KEYS = frozenset({"reasoning_content", "reasoning", "reasoning_details", _EXECUTED})


def _chat(
    reasoning: str, *, carries: frozenset[str] = frozenset(), vendor: frozenset[str] = frozenset()
) -> Target:
    """Chat encoded for the upstreams of one reasoning dialect (``none``: plain OpenAI)."""
    return Target(
        name="openai_chat" if reasoning == "none" else f"openai_chat[{reasoning}]",
        dialect="openai_chat",
        options={"reasoning_dialect": reasoning},
        stream_options=_CHAT_STREAM,
        one_text_stream=True,
        carries=carries,
        vendor_keys=vendor,
    )


_VARIANTS: dict[str, tuple[Target, ...]] = {
    "openai_chat": (
        _chat("none"),
        _chat("reasoning_content", vendor=frozenset({"reasoning_content", _EXECUTED})),
        _chat("openrouter", carries=frozenset({OPENROUTER_DETAIL}), vendor=_CHAT_REASONING_KEYS),
        _chat("reasoning", vendor=frozenset({"reasoning", "include_reasoning", _EXECUTED})),
        _chat(
            "gemini-compat",
            carries=frozenset({GEMINI_SIGNATURE}),
            vendor=frozenset({"extra_content", _EXECUTED}),
        ),
    ),
}
"""Dialects encoded in several ways (Chat's reasoning dialects), each a target of its own."""


def _targets(name: DialectName) -> tuple[Target, ...]:
    folder = package(name)
    default = Target(name=folder, dialect=folder, carries=http_facts(name).opaque_formats)
    return _VARIANTS.get(folder, (default,))


PROVIDER_TARGETS: dict[str, tuple[Target, ...]] = {
    package(name): _targets(name) for name in DIALECT_NAMES
}
"""The targets each provider dialect is translated into, with what each one carries (the
registry's HTTP facts say which opaque formats a dialect replays to their issuer)."""

AGUI_TARGET = Target(name="agui", dialect="agui", carries=OPAQUE_FORMATS)
"""AG-UI carries every opaque payload to the browser sealed, and back unchanged."""

_CONTRACT = (
    "DIALECT",
    "decode_request",
    "encode_request",
    "decode_response",
    "encode_response",
    "StreamDecoder",
    "StreamEncoder",
)


class CodecUnavailable(LookupError):
    """A dialect's package does not (yet) export the codec contract."""


def provider_codec(name: str, module: ModuleType) -> ProviderCodec:
    """The codec record of a provider dialect package; raises :class:`CodecUnavailable`."""
    missing = [attribute for attribute in _CONTRACT if not hasattr(module, attribute)]
    if missing:
        raise CodecUnavailable(f"{module.__name__} does not export {', '.join(missing)}")
    return ProviderCodec(
        name=name,
        dialect=module.DIALECT,
        decode_request=module.decode_request,
        encode_request=module.encode_request,
        decode_response=module.decode_response,
        encode_response=module.encode_response,
        stream_decoder=module.StreamDecoder,
        stream_encoder=module.StreamEncoder,
        targets=PROVIDER_TARGETS[name],
        spelling=getattr(module, "wire_spelling", None),
    )


def default_registry() -> tuple[dict[str, Codec], dict[str, str]]:
    """The real codecs, and for each dialect that is not available, why."""
    codecs: dict[str, Codec] = {}
    unavailable: dict[str, str] = {}
    for name in PROVIDER_TARGETS:
        try:
            module = importlib.import_module(f"interlock.codecs.{name}")
            codecs[name] = provider_codec(name, module)
        except (ImportError, CodecUnavailable) as error:
            unavailable[name] = str(error)
    try:
        from interlock.conformance._agui import agui_codec

        codecs["agui"] = agui_codec()
    except (ImportError, CodecUnavailable) as error:
        unavailable["agui"] = str(error)
    return codecs, unavailable


def replay(policy_mode: str) -> ReplayPolicy:
    """The replay policy of a run mode (``strict`` or ``degrade``)."""
    return ReplayPolicy(mode="degrade") if policy_mode == "degrade" else ReplayPolicy()
