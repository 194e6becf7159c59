"""The proxy's request bodies parsed and decoded with the history cache, and remembered.

A request whose body continues a known history prefix (:mod:`.history_cache`) has only
its new history items parsed, decoded and (same dialect) checked; every request that
passed leaves its own prefix for the next. Whatever cannot be continued takes the full
path, which answers with its own result or error.
"""

from __future__ import annotations

from dataclasses import replace

from interlock.gateway import body_split, strict_json
from interlock.gateway.bodies import ProxyError, parse_payload
from interlock.gateway.dialects import Dialect
from interlock.gateway.history_cache import (
    HISTORY_KEYS,
    Entry,
    HistoryCache,
    ParsedBody,
    checks_alone,
    continue_body,
    hold,
    split_body,
)
from interlock.gateway.history_ingress import lead_count, new_messages, prefix_count
from interlock.gateway.pairing import find_unpaired
from interlock.gateway.proxy_call import ProxyCall
from interlock.gateway.splice_rules import BRIDGE
from interlock.gateway.translation_cache import bridged_check
from interlock.gateway.vault import Lookup, wanted_keys
from interlock.transcript import DecodeError, LossyHistoryError, Message, ReplayPolicy, Request


def full_parse(ingress: Dialect, body: bytes) -> ParsedBody:
    """``body`` parsed without the history cache (its prefix can still be remembered)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return ParsedBody(parse_payload(body))
    return _split(body, text, HISTORY_KEYS[ingress.name])


def _split(body: bytes, text: str, key: str) -> ParsedBody:
    fast = body_split.split(body, text, key)
    split = fast or split_body(text, key)
    if split is None:
        return ParsedBody(parse_payload(body))
    parsed = ParsedBody(
        split.payload, body, split.head, split.head_bytes, split.prefix_end, model_at=split.model_at
    )
    if fast is not None:  # orjson parsed it: it refuses lone surrogate escapes
        parsed.known_bytes = len(body)
    return parsed


def parse(history: HistoryCache, ingress: Dialect, tenant: str, body: bytes) -> ParsedBody:
    """``body`` parsed and checked (or a 400); continued from a known history prefix
    when one fits."""
    parsed = _parse(history, ingress, tenant, body)
    try:
        strict_json.check_body_surrogates(body, parsed.payload, parsed.known_bytes)
    except strict_json.StrictJsonError as error:
        if parsed.continuation is not None:  # answered with its place in the whole body
            return _checked(full_parse(ingress, body), body)
        raise ProxyError(400, str(error), code="invalid_json", param=error.path) from error
    return parsed


def _checked(parsed: ParsedBody, body: bytes) -> ParsedBody:
    try:
        strict_json.check_body_surrogates(body, parsed.payload)
    except strict_json.StrictJsonError as error:
        raise ProxyError(400, str(error), code="invalid_json", param=error.path) from error
    return parsed


def _parse(history: HistoryCache, ingress: Dialect, tenant: str, body: bytes) -> ParsedBody:
    key = HISTORY_KEYS.get(ingress.name)
    if key is None or len(body) < history.min_bytes:
        return ParsedBody(parse_payload(body))
    entry = history.find((tenant, ingress.name), body)
    if entry is not None:
        continuation = continue_body(entry, body, key)
        if continuation is not None:
            payload, end = continuation.payload, continuation.prefix_end
            parsed = ParsedBody(payload, body, entry.head, entry.head_bytes, end, continuation)
            # The known prefix passed the surrogate check already: only the rest is searched.
            parsed.known_bytes = entry.size
            parsed.continued = entry
            return parsed
    return full_parse(ingress, body)


def decode(
    history: HistoryCache, ingress: Dialect, parsed: ParsedBody, body: bytes
) -> tuple[ParsedBody, Request]:
    """The canonical request: only the new messages decoded after a known prefix."""
    continuation = parsed.continuation
    held = continuation is None or continuation.entry.messages is not None
    if not held:
        parsed = full_parse(ingress, body)  # a second request: decoded whole, once
        parsed.continues = True
        parsed.continued = continuation.entry if continuation is not None else None
    elif continuation is not None:
        entry = continuation.entry
        try:
            suffix = ingress.decode_request(parsed.payload)
        except DecodeError:
            suffix = None
        new = None if suffix is None else new_messages(ingress, entry, suffix, parsed.payload)
        if suffix is not None and new is not None:
            parsed.new = new
            parsed.messages = (entry.messages or ()) + new
            history.reused += 1
            return parsed, replace(suffix, messages=parsed.messages)
        # Not separable here: the full path, as if nothing were known.
        parsed = full_parse(ingress, body)
        parsed.continues = True
    try:
        request = ingress.decode_request(parsed.payload)
    except DecodeError as error:
        raise ProxyError(400, str(error), code="invalid_request", param=error.path) from error
    parsed.messages = request.messages
    if not held and continuation is not None:
        items = parsed.payload.get(HISTORY_KEYS[ingress.name])
        count = prefix_count(ingress, continuation, request.messages, items)
        if count is not None:
            hold(continuation, request.messages[:count])
    return parsed, request


def suffix_checks(
    history: HistoryCache, call: ProxyCall, checked: tuple[str, str], policy: ReplayPolicy
) -> bool:
    """True when the new messages alone passed the replay check standing for all.

    Any refusal here is left to the full check, which then answers with its own
    error and locations.
    """
    parsed = call.parsed
    continuation = parsed.continuation if parsed is not None else None
    if parsed is None or continuation is None:
        return False
    entry = continuation.entry
    if entry.checked_for != checked or not checks_alone(entry, parsed.new):
        return False
    request = replace(call.request, messages=parsed.new)
    state = request.continuation
    if state.previous_response_id or state.conversation_id:
        return False  # the encoder starts where the stored state ends: the full check
    if call.upstream.dialect.name != "openai-chat" and find_unpaired(request) is not None:
        return False  # (the Chat encoder checks its own pairing)
    if call.upstream.dialect.name in BRIDGE:  # Anthropic checks the whole body
        if not bridged_check(call.upstream.dialect, request, policy, entry):
            return False
    else:
        try:
            call.upstream.dialect.encode_request(request, policy)
        except LossyHistoryError:
            return False
    history.checks_reused += 1
    return True


def remember(history: HistoryCache, call: ProxyCall, checked: tuple[str, str] | None) -> None:
    """Keep this request's history prefix for the next request of the conversation."""
    parsed = call.parsed
    if parsed is None or parsed.source is None or parsed.head is None or not parsed.prefix_end:
        return
    continuation = parsed.continuation
    _hold_lookup(call, parsed)
    if continuation is not None:
        if not continuation.new_items:
            return  # the same history again: its prefix is kept already
        known = continuation.entry.call_ids
        new = parsed.new
    elif not parsed.continues:
        known, new = frozenset[str](), ()
    else:
        known, new = frozenset[str](), parsed.messages
    call_ids = known | {part.call_id for message in new for part in message.tool_calls}
    held = continuation is not None or parsed.continues
    items = parsed.payload.get(HISTORY_KEYS[call.ingress.name])
    entry = Entry(
        source=parsed.source,
        size=parsed.prefix_end,
        head=parsed.head,
        head_bytes=parsed.head_bytes,
        messages=parsed.messages if held else None,
        call_ids=call_ids,
        checked_for=checked,
        translation=call.translated if held else None,
        last_item=items[-1] if isinstance(items, list) and items else None,
        vault_lookup=call.vault_lookup if held else None,
        lead=lead_count(call.ingress.name, parsed.payload),
    )
    history.keep((call.tenant, call.ingress.name), entry)


def vault_read(call: ProxyCall, request: Request) -> tuple[Lookup | None, tuple[Message, ...]]:
    """The vault lookup a continued prefix had for this call's upstream (its keys are not
    built again: each message's keys depend on that message alone) and the messages of
    ``request`` whose keys are still to be built; ``(None, all of them)`` otherwise."""
    parsed = call.parsed
    continuation = parsed.continuation if parsed is not None else None
    if parsed is None or continuation is None:
        return None, request.messages
    entry = continuation.entry
    kept = entry.vault_lookup
    held = entry.messages
    if kept is None or kept[0] != call.upstream.name or held is None:
        return None, request.messages
    if len(request.messages) != len(held) + len(parsed.new):
        return None, request.messages
    return kept[1], parsed.new


def _hold_lookup(call: ProxyCall, parsed: ParsedBody) -> None:
    """Give the entry this request continued but decoded whole (it just got its messages,
    see ``hold``) its prefix's vault lookup: this request's, without its new keys."""
    entry, whole = parsed.continued, call.vault_lookup
    if entry is None or entry.vault_lookup is not None or entry.messages is None or whole is None:
        return
    if parsed.continuation is not None or whole[0] != call.upstream.name:
        return
    held = entry.messages
    if parsed.messages[: len(held)] != held:
        return
    new_keys = len(wanted_keys(parsed.messages[len(held) :], call.upstream.config))
    if new_keys <= len(whole[1].ids):
        entry.vault_lookup = (whole[0], whole[1].head(len(whole[1].ids) - new_keys))
