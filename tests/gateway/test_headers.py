"""Response headers: a bounded translation outcome on every proxy answer, errors included;
the upstream's request ids, retry-after and rate-limit headers passed on."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.gateway.headers import (
    HEADER_LIMIT,
    WARNINGS_KEPT,
    Said,
    code_counts,
    folded,
    header_value,
    translation_label,
    warning_list,
)
from interlock.transcript import TranslationWarning
from tests.gateway.helpers import (
    CONFIG,
    BreakingStream,
    Recorder,
    chat_chunks,
    chat_completion,
    client,
    gateway,
    sse,
)
from tests.gateway.loopback_upstream import access_log

CHAT = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
UPSTREAM_HEADERS = {
    "x-request-id": "req_123",
    "retry-after": "7",
    "x-ratelimit-remaining-requests": "41",
    "set-cookie": "session=nope",
    "openai-organization": "org-secret",
}
KEYED = """
[server]
api_keys = ["sk-client-1"]
max_body_bytes = 4096
[store]
url = "memory://"
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "https://chat.example/v1"
[[models]]
name = "to-chat"
upstream = "chat"
model = "up-chat"
"""


def _warnings(codes: list[str]) -> tuple[TranslationWarning, ...]:
    return tuple(
        TranslationWarning(code=code, location=f"messages[{i}]", message=f"{code} {i}")
        for i, code in enumerate(codes)
    )


def test_warnings_are_folded_past_eight_of_a_code() -> None:
    codes = ["a", "b"] * 3 + ["a"] * 20 + ["c"] * 9 + ["b"] * 2
    warnings = _warnings(codes)
    said = folded(warnings)
    listed = warning_list(warnings)
    a_positions = [i for i, code in enumerate(codes) if code == "a"]
    c_positions = [i for i, code in enumerate(codes) if code == "c"]
    # a: 23 in all, the first 8 in full, the 9th's place holds the summary of the last 15
    assert [entry.warning for entry in said if entry.warning.code == "a"][:WARNINGS_KEPT] == [
        warnings[i] for i in a_positions[:WARNINGS_KEPT]
    ]
    summary_a = listed[WARNINGS_KEPT + 3]  # after a, b, a, b, a, b, a×5: the 9th a
    assert summary_a == {
        "code": "a",
        "location": f"messages[{a_positions[WARNINGS_KEPT]}]",
        "message": "... and 15 more like this",
        "omitted": 15,
    }
    assert [item for item in listed if isinstance(item, dict) and item["code"] == "b"] == [
        {"code": "b", "location": f"messages[{i}]", "message": f"b {i}"}
        for i, code in enumerate(codes)
        if code == "b"
    ]  # 5 of b: all in full, no summary
    assert listed[-3] == {  # then b, b
        "code": "c",
        "location": f"messages[{c_positions[-1]}]",
        "message": "... and 1 more like this",
        "omitted": 1,
    }
    assert len(listed) == 8 + 1 + 5 + 8 + 1
    label = translation_label(warnings, 0)
    assert label.count("a at ") == label.count("c at ") == WARNINGS_KEPT
    assert ", 15 more a, " in label and label.endswith(
        ", 1 more c, b at messages[35], b at messages[36]"
    )


def test_short_lists_are_listed_whole() -> None:
    warnings = _warnings(["a"] * WARNINGS_KEPT + ["b"])
    assert warning_list(warnings) == [
        {"code": w.code, "location": w.location, "message": w.message} for w in warnings
    ]
    assert translation_label(warnings, 3) == "degraded; " + ", ".join(
        f"{w.code} at {w.location}" for w in warnings
    )
    assert translation_label((), 3) == "translated; restored 3 from vault"


@given(st.lists(st.sampled_from(["vault_miss", "name_dropped", "field_dropped"]), max_size=60))
def test_a_fold_keeps_order_and_accounts_for_every_warning(codes: list[str]) -> None:
    warnings = _warnings(codes)
    said = folded(warnings)
    full = [entry.warning for entry in said if not entry.omitted]
    assert full == [w for w in warnings if w in full]  # in order, a subsequence
    for code in set(codes):
        mine = [entry for entry in said if entry.warning.code == code]
        assert len(mine) == min(codes.count(code), WARNINGS_KEPT + 1)
        assert sum(entry.omitted or 1 for entry in mine) == codes.count(code)
        assert all(entry.omitted for entry in mine[WARNINGS_KEPT:])


def _walked(warnings: tuple[TranslationWarning, ...]) -> list[Said]:
    """The fold as it was first written: every warning walked, the summaries made after."""
    if len(warnings) <= WARNINGS_KEPT:
        return [Said(warning) for warning in warnings]
    seen: dict[str, int] = {}
    said: list[Said] = []
    summaries: dict[str, int] = {}
    for warning in warnings:
        times = seen.get(warning.code, 0) + 1
        seen[warning.code] = times
        if times <= WARNINGS_KEPT:
            said.append(Said(warning))
        elif times == WARNINGS_KEPT + 1:
            summaries[warning.code] = len(said)
            said.append(Said(warning))
    for code, position in summaries.items():
        omitted = seen[code] - WARNINGS_KEPT
        first = said[position].warning
        summary = TranslationWarning(
            code=code, location=first.location, message=f"... and {omitted} more like this"
        )
        said[position] = Said(summary, omitted)
    return said


@given(
    st.lists(
        st.sampled_from(["vault_miss", "vault_miss", "name_dropped", "field_dropped", "x"]),
        max_size=80,
    )
)
def test_the_fold_stops_early_and_says_what_walking_every_warning_says(codes: list[str]) -> None:
    warnings = _warnings(codes)
    assert folded(warnings) == _walked(warnings)


@given(st.lists(st.sampled_from(["vault_miss", "name_dropped", "x", ""]), max_size=60))
def test_codes_are_counted_as_a_counter_counts_them_in_first_seen_order(codes: list[str]) -> None:
    counted = code_counts(_warnings(codes))
    assert list(counted.items()) == list(Counter(codes).items())


def test_a_long_outcome_is_counted_by_code_within_the_limit() -> None:
    codes = [f"code_{i % 12}" for i in range(400)]  # 12 codes × 9 listed: past the limit
    warnings = _warnings(codes)
    label = translation_label(warnings, 0)
    assert HEADER_LIMIT < len(label) < 12 * 9 * 40
    value = header_value(label, warnings)
    counts = ", ".join(f"code_{i}={34 if i < 4 else 33}" for i in range(12))
    assert value == f"degraded; 400 warnings by code: {counts}"
    short = translation_label(warnings[:2], 0)
    assert header_value(short, warnings[:2]) == short  # small lists stay listed


def test_a_header_value_is_printable_ascii() -> None:
    value = header_value("degraded; field_dropped at messages[0].名前\r\nx-evil: 1")
    assert value.isascii() and value.isprintable() and "\r" not in value
    assert len(header_value("degraded; " + "x" * 5000)) == HEADER_LIMIT


async def test_every_error_answer_carries_the_header() -> None:
    def unreachable(_: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    built = gateway({"chat": unreachable})
    async with client(built) as http:
        answers = {
            "malformed": await http.post("/v1/chat/completions", content=b"{nope"),
            "unknown-model": await http.post("/v1/chat/completions", json={**CHAT, "model": "x"}),
            "too-large": await http.post("/v1/chat/completions", json={**CHAT, "pad": "x" * 5000}),
            "bad-field": await http.post("/v1/chat/completions", json={**CHAT, "messages": 3}),
            "gemini-unknown": await http.post(
                "/v1beta/models/nope:generateContent", json=GEMINI_BODY
            ),
            "unreachable": await http.post("/v1/chat/completions", json=CHAT),
            "unreachable-translated": await http.post(
                "/v1/responses", json={"model": "to-chat", "input": "hi"}
            ),
        }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {
        "malformed": 400,
        "unknown-model": 404,
        "too-large": 413,
        "bad-field": 400,
        "gemini-unknown": 404,
        "unreachable": 502,
        "unreachable-translated": 502,
    }
    outcomes = {name: answer.headers["x-interlock-translation"] for name, answer in answers.items()}
    assert outcomes == {
        "malformed": "none",
        "unknown-model": "none",
        "too-large": "none",
        "bad-field": "none",
        "gemini-unknown": "none",
        "unreachable": "exact",
        "unreachable-translated": "translated",
    }


async def test_a_401_and_the_model_lists_carry_the_header() -> None:
    async with client(gateway({"chat": Recorder(lambda _: httpx.Response(200))}, KEYED)) as http:
        refused = await http.post("/v1/chat/completions", json=CHAT)
        models = await http.get("/v1/models", headers={"authorization": "Bearer sk-client-1"})
    assert refused.status_code == 401 and models.status_code == 200
    assert refused.headers["x-interlock-translation"] == "none"
    assert models.headers["x-interlock-translation"] == "none"


def _passed(answer: httpx.Response) -> dict[str, str]:
    return {name: answer.headers.get(name, "") for name in UPSTREAM_HEADERS}


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
async def test_request_ids_retry_after_and_rate_limits_pass_through(path: str) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content).get("stream"):
            body = sse(chat_chunks(), done=True)
            return httpx.Response(200, content=body, headers=UPSTREAM_HEADERS)
        return httpx.Response(200, json=chat_completion(), headers=UPSTREAM_HEADERS)

    def limited(_: httpx.Request) -> httpx.Response:
        return httpx.Response(
            429, json={"error": {"message": "slow down"}}, headers=UPSTREAM_HEADERS
        )

    payload = {**CHAT, "input": "hi"}
    async with client(gateway({"chat": answer})) as http:
        plain = await http.post(path, json=payload)
        streamed = await http.post(path, json={**payload, "stream": True})
    async with client(gateway({"chat": limited})) as http:
        refused = await http.post(path, json=payload)
    assert refused.status_code == 429
    for reply in (plain, streamed, refused):
        assert _passed(reply) == {
            "x-request-id": "req_123",
            "retry-after": "7",
            "x-ratelimit-remaining-requests": "41",
            "set-cookie": "",
            "openai-organization": "",
        }


async def test_a_degraded_answer_lists_its_warnings_folded_in_the_log_and_the_body() -> None:
    gemini_answer = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "ok"}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "modelVersion": "up-gemini",
    }
    upstream = Recorder(lambda _: httpx.Response(200, json=gemini_answer))
    messages = [{"role": "user", "content": f"turn {i}", "name": "alice"} for i in range(400)]
    config = CONFIG.replace("max_body_bytes = 4096", "max_body_bytes = 1048576").replace(
        'name = "gemini"\nprotocol = "gemini"',
        'name = "gemini"\nprotocol = "gemini"\nreplay_mode = "degrade"',
    )
    async with client(gateway({"gemini": upstream}, config)) as http:
        with access_log() as lines:
            answer = await http.post(
                "/v1/chat/completions", json={"model": "to-gemini", "messages": messages}
            )
    assert answer.status_code == 200, answer.text
    header = answer.headers["x-interlock-translation"]
    assert header == answer.json()["interlock"]["translation"] == lines[-1]["translation"]
    assert header.count("name_dropped at") == WARNINGS_KEPT
    assert header.endswith(f", {400 - WARNINGS_KEPT} more name_dropped")
    warnings = answer.json()["interlock"]["warnings"]
    assert len(warnings) == WARNINGS_KEPT + 1 and warnings[-1]["omitted"] == 400 - WARNINGS_KEPT
    assert warnings[-1]["location"].startswith(f"messages[{WARNINGS_KEPT}]")


async def test_a_stream_broken_after_the_headers_still_has_them() -> None:
    def breaking(_: httpx.Request) -> httpx.Response:
        stream = BreakingStream([sse(chat_chunks()[:1])])
        return httpx.Response(200, stream=stream, headers=UPSTREAM_HEADERS)

    async with client(gateway({"chat": breaking})) as http:
        answer = await http.post("/v1/chat/completions", json={**CHAT, "stream": True})
    assert answer.headers["x-interlock-translation"] == "exact"
    assert answer.headers["x-request-id"] == "req_123"
