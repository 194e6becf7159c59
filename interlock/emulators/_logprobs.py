"""The emulated model's token log-probabilities, for a request that asks for them.

A text is split into word tokens (each with the whitespace before it); every token gets a
deterministic log-probability, its UTF-8 bytes and a vocabulary id, and ``top`` alternatives
(the chosen token first, then made-up runners-up, each less likely). The emulators write
them in their own dialect's shape through their codec, as the services do.
"""

from __future__ import annotations

import re
from dataclasses import replace

from interlock.transcript import Response, TextPart, TokenLogprob

MAX_TOP = 20
"""The most alternatives per token the services return (OpenAI and Gemini alike)."""
_TOKEN = re.compile(r"\s*\S+|\s+")


def _token(text: str, position: int) -> TokenLogprob:
    encoded = text.encode("utf-8")
    return TokenLogprob(
        token=text,
        logprob=-round(0.05 + (position % 7) * 0.1, 2),
        bytes=tuple(encoded),
        token_id=sum(encoded) * 31 % 50_000,
    )


def tokens_of(text: str, top: int) -> tuple[TokenLogprob, ...]:
    """``text`` as tokens, each with ``top`` alternatives (the chosen one among them)."""
    tokens: list[TokenLogprob] = []
    for position, piece in enumerate(_TOKEN.findall(text)):
        chosen = _token(piece, position)
        others = [
            replace(_token(f"{piece}~{rank}", position), logprob=chosen.logprob - rank)
            for rank in range(1, top)
        ]
        alternatives = (replace(chosen, top=()), *others) if top else ()
        tokens.append(replace(chosen, top=alternatives))
    return tuple(tokens)


def with_logprobs(response: Response, top: int) -> Response:
    """``response`` with the tokens of every text part (``top`` alternatives each)."""
    parts = tuple(
        replace(part, logprobs=tokens_of(part.text, top)) if isinstance(part, TextPart) else part
        for part in response.message.parts
    )
    return replace(response, message=replace(response.message, parts=parts))
