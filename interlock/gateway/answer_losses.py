"""What an answer loses on its way to the client's dialect, said in its translation label.

``encode_response`` has no warning channel in the codec contract; the gateway checks the
answer it encoded instead. Citations are the one kind of content a client dialect may have no
form for in an answer (Anthropic cites only its own search results and documents; OpenAI
annotations are URL citations): when the encoded answer, decoded back in the client's
dialect, holds fewer citations than the upstream's answer, a ``citation_dropped`` warning is
added to the call, so the translation header (and the ``interlock`` field, where the client's
SDK allows one) says so. Streams send their headers before the answer: only non-streamed
answers are checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from interlock.gateway.headers import TRANSLATION_HEADER, header_value, translation_label
from interlock.transcript import JsonObject, Response, TextPart, TranslationWarning

if TYPE_CHECKING:
    from interlock.gateway.proxy import ProxyCall


def _citations(response: Response) -> int:
    parts = response.message.parts
    return sum(len(part.citations) for part in parts if isinstance(part, TextPart))


def note_answer_losses(
    call: ProxyCall, decoded: Response, answer: JsonObject, headers: dict[str, str]
) -> None:
    """Add a ``citation_dropped`` warning to ``call`` (and its header) when ``answer`` lost
    citations of ``decoded``."""
    sent = _citations(decoded)
    if not sent:
        return
    arrived = _citations(call.ingress.decode_response(answer))
    if arrived >= sent:
        return
    warning = TranslationWarning(
        code="citation_dropped",
        location="message",
        message=f"{sent - arrived} of {sent} citations have no {call.ingress.name} form",
    )
    call.warnings = (*call.warnings, warning)
    call.translation = translation_label(call.warnings, 0)
    headers[TRANSLATION_HEADER] = header_value(call.translation, call.warnings)
