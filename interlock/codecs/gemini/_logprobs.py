"""A candidate's ``logprobsResult`` / ``avgLogprobs`` ⇄ canonical :class:`TokenLogprob` values.

``logprobsResult.chosenCandidates[i]`` is the token chosen at step ``i`` (``token``,
``tokenId``, ``logProbability``); ``topCandidates[i].candidates`` the most likely tokens at
that step. Gemini gives one list per candidate: decoded, it goes on the candidate's first
text part (:func:`~interlock.codecs._logprobs.with_logprobs`); encoded, it is every text
part's tokens in order, with ``avgLogprobs`` their mean. The fields as received stay in the
candidate's kept fields, so a Gemini answer's own are written back unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.codecs.gemini._wire import as_list, as_object, as_str
from interlock.transcript import DecodeError, JsonObject, JsonValue, TokenLogprob

RESULT = "logprobsResult"
AVERAGE = "avgLogprobs"


def _token(value: JsonValue, path: str) -> TokenLogprob:
    entry = as_object(value, path)
    probability = entry.get("logProbability", 0.0)
    if isinstance(probability, bool) or not isinstance(probability, int | float):
        raise DecodeError(f"{path}.logProbability", "expected a number")
    token_id = entry.get("tokenId")
    if token_id is not None and (isinstance(token_id, bool) or not isinstance(token_id, int)):
        raise DecodeError(f"{path}.tokenId", "expected an integer")
    return TokenLogprob(
        token=as_str(entry.get("token", ""), f"{path}.token"),
        logprob=float(probability),
        token_id=token_id,
    )


def decode_logprobs(candidate: JsonObject, path: str) -> tuple[TokenLogprob, ...]:
    """The chosen tokens of a candidate's ``logprobsResult`` with their top alternatives."""
    result = candidate.get(RESULT)
    if result is None:
        return ()
    where = f"{path}.{RESULT}"
    fields = as_object(result, where)
    chosen = as_list(fields.get("chosenCandidates", []), f"{where}.chosenCandidates")
    tops = as_list(fields.get("topCandidates", []), f"{where}.topCandidates")
    tokens: list[TokenLogprob] = []
    for i, value in enumerate(chosen):
        token = _token(value, f"{where}.chosenCandidates[{i}]")
        if i < len(tops):
            at = f"{where}.topCandidates[{i}]"
            step = as_list(as_object(tops[i], at).get("candidates", []), f"{at}.candidates")
            top = tuple(_token(item, f"{at}.candidates[{j}]") for j, item in enumerate(step))
            token = TokenLogprob(
                token=token.token, logprob=token.logprob, token_id=token.token_id, top=top
            )
        tokens.append(token)
    return tuple(tokens)


def _wire_token(token: TokenLogprob) -> JsonObject:
    wire: JsonObject = {"token": token.token}
    if token.token_id is not None:
        wire["tokenId"] = token.token_id
    wire["logProbability"] = token.logprob
    return wire


def encode_logprobs(tokens: Sequence[TokenLogprob]) -> JsonObject:
    """A candidate's ``logprobsResult`` and ``avgLogprobs`` for ``tokens`` (empty for none)."""
    if not tokens:
        return {}
    result: JsonObject = {}
    if any(token.top for token in tokens):
        result["topCandidates"] = [
            {"candidates": [_wire_token(item) for item in token.top]} for token in tokens
        ]
    result["chosenCandidates"] = [_wire_token(token) for token in tokens]
    average = sum(token.logprob for token in tokens) / len(tokens)
    return {AVERAGE: average, RESULT: result}
