"""Token log-probabilities ⇄ canonical :class:`TokenLogprob` values, for the dialects that
share OpenAI's shape and for putting them on a message's text.

OpenAI (Chat ``logprobs.content[]``, Responses ``output_text.logprobs[]`` and its stream
deltas) writes each token as ``{"token", "logprob", "bytes", "top_logprobs": [...]}``; the
alternatives in ``top_logprobs`` have no list of their own. Gemini's shape is in its codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    Message,
    Part,
    TextPart,
    TokenLogprob,
)


def _number(value: JsonValue, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecodeError(path, "expected a number")
    return float(value)


def _bytes(value: JsonValue, path: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        raise DecodeError(path, "expected a list of byte values")
    return tuple(item for item in value if isinstance(item, int))


def _token(value: JsonValue, path: str, nested: bool) -> TokenLogprob:
    if not isinstance(value, dict):
        raise DecodeError(path, "expected an object")
    token = value.get("token")
    if not isinstance(token, str):
        raise DecodeError(f"{path}.token", "expected a string")
    top: tuple[TokenLogprob, ...] = ()
    if not nested and value.get("top_logprobs") is not None:
        top = decode_openai_tokens(value["top_logprobs"], f"{path}.top_logprobs", nested=True)
    return TokenLogprob(
        token=token,
        logprob=_number(value.get("logprob"), f"{path}.logprob"),
        bytes=_bytes(value.get("bytes"), f"{path}.bytes"),
        top=top,
    )


def decode_openai_tokens(
    value: JsonValue, path: str, *, nested: bool = False
) -> tuple[TokenLogprob, ...]:
    """A list of OpenAI token log-probabilities (raises :class:`DecodeError` naming the path)."""
    if not isinstance(value, list):
        raise DecodeError(path, "expected a list")
    return tuple(_token(item, f"{path}[{i}]", nested) for i, item in enumerate(value))


def encode_openai_tokens(
    tokens: Sequence[TokenLogprob], *, with_bytes: bool = True, top_bytes: bool = True
) -> list[JsonValue]:
    """OpenAI token log-probabilities. ``with_bytes``: write ``bytes`` (the token's UTF-8
    bytes when the provider gave none: Responses requires the list); ``top_bytes`` the same
    for the alternatives (a Responses stream delta's have none)."""
    out: list[JsonValue] = []
    for token in tokens:
        entry: JsonObject = {"token": token.token, "logprob": token.logprob}
        if with_bytes:
            entry["bytes"] = _bytes_of(token)
        top: list[JsonValue] = []
        for alternative in token.top:
            item: JsonObject = {"token": alternative.token, "logprob": alternative.logprob}
            if top_bytes:
                item["bytes"] = _bytes_of(alternative)
            top.append(item)
        entry["top_logprobs"] = top
        out.append(entry)
    return out


def _bytes_of(token: TokenLogprob) -> JsonValue:
    return list(token.bytes if token.bytes is not None else token.token.encode("utf-8"))


def message_logprobs(message: Message) -> tuple[TokenLogprob, ...]:
    """Every token log-probability of a message's text parts, in order."""
    tokens: list[TokenLogprob] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            tokens.extend(part.logprobs)
    return tuple(tokens)


def with_logprobs(parts: Sequence[Part], tokens: tuple[TokenLogprob, ...]) -> tuple[Part, ...]:
    """``parts`` with ``tokens`` on the first text part with text (a dialect that gives one
    list per answer); unchanged when there is none or no tokens."""
    if not tokens:
        return tuple(parts)
    for index, part in enumerate(parts):
        if isinstance(part, TextPart) and part.text:
            return (*parts[:index], replace(part, logprobs=tokens), *parts[index + 1 :])
    return tuple(parts)
