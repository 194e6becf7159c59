"""The real-traffic corpus: its provenance, the runner's checks, and the published counts.

Every failure the corpus run finds must be listed in ``conformance/corpus/known-failures.txt``
and every listed one must still occur: a regression fails here, and so does a fix until its
lines are removed (``interlock conformance --corpus --write-known``, then review the diff).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import cast

import pytest

from interlock.codecs._sse import SseEvent
from interlock.conformance import default_registry, main
from interlock.conformance._codecs import ProviderCodec, StreamDecoderLike
from interlock.conformance._corpus import CorpusResult, run_corpus
from interlock.conformance._corpus_files import CorpusPayload, load_corpus
from interlock.conformance._corpus_report import CAUSES, corpus_markdown, ledger, read_known
from interlock.conformance._settings import compare_settings, setting_items
from interlock.conformance._vectors import VectorError
from interlock.transcript import (
    DecodeError,
    GenerationOptions,
    JsonObject,
    JsonValue,
    Message,
    Request,
    Response,
    TextPart,
    TranslationWarning,
    Update,
    UsageUpdate,
)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance" / "corpus"


@cache
def corpus() -> list[CorpusPayload]:
    return load_corpus(CORPUS)


@cache
def corpus_run() -> CorpusResult:
    registry, _ = default_registry()
    return run_corpus(corpus(), registry)


def test_the_corpus_is_large_enough_and_from_at_least_six_vendors() -> None:
    payloads = corpus()
    assert len(payloads) >= 400
    assert len({payload.vendor for payload in payloads}) >= 6
    assert {payload.kind for payload in payloads} == {"request", "response", "stream"}


def test_every_file_names_its_source_and_the_manifest_lists_it() -> None:
    manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["file"]: entry for entry in manifest["sources"]}
    files = sorted(CORPUS.glob("payloads/*/*.json"))
    assert sorted(listed) == [str(path.relative_to(CORPUS)) for path in files]
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        entry = listed[str(path.relative_to(CORPUS))]
        assert document["source"] == {key: entry[key] for key in document["source"]}
        assert len(document["source"]["commit"]) == 40
        assert document["source"]["licence"] in ("MIT", "Apache-2.0")
        assert entry["payloads"] == len(document["payloads"])


def test_every_corpus_failure_is_known_and_every_known_one_still_occurs() -> None:
    found = ledger(corpus_run(), read_known(CORPUS / "known-failures.txt"))
    assert list(found.new) == []
    assert list(found.stale) == []


def test_docs_fidelity_shows_the_current_corpus_counts() -> None:
    published = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    files = len({payload.name.partition("#")[0] for payload in corpus()})
    section = corpus_markdown(corpus_run(), files)
    assert published.endswith("\n" + section)


def _write_corpus(root: Path, payloads: list[JsonObject]) -> None:
    (root / "payloads" / "test").mkdir(parents=True)
    source = {"repository": "o/r", "path": "p", "commit": "0" * 40, "licence": "MIT"}
    document = {"corpus": 1, "source": source, "payloads": payloads}
    (root / "payloads" / "test" / "one.json").write_text(json.dumps(document), encoding="utf-8")


def test_a_payload_the_decoder_refuses_is_a_false_rejection(tmp_path: Path) -> None:
    _write_corpus(
        tmp_path,
        [{"dialect": "openai_chat", "vendor": "test", "kind": "request", "wire": {"x": 1}}],
    )
    registry, _ = default_registry()
    result = run_corpus(load_corpus(tmp_path), registry)
    assert result.table()["test"]["rejected"] == 1
    assert [f.check for f in result.failures] == ["decode"]
    assert "false rejection" in result.failures[0].message


def test_a_setting_dropped_without_a_warning_is_lost_and_with_one_degraded() -> None:
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="hi"),)),),
        options=GenerationOptions(temperature=0.5, seed=7),
        extra={"openai-chat": {"response_format": {"type": "json_object"}}},
    )
    items = setting_items(request)
    assert {item.location for item in items} == {
        "settings.temperature",
        "settings.seed",
        "settings.response_format",
    }
    back = [item for item in items if item.location == "settings.temperature"]
    warning = TranslationWarning(code="option_dropped", location="options.seed", message="x")
    outcomes = {
        r.item.location: (r.outcome, r.failure) for r in compare_settings(items, back, [warning])
    }
    assert outcomes == {
        "settings.temperature": ("translated", None),
        "settings.seed": ("degraded", None),
        "settings.response_format": (None, "lost"),
    }


def test_a_decoder_double_that_rejects_everything_is_caught(tmp_path: Path) -> None:
    _write_corpus(
        tmp_path,
        [
            {
                "dialect": "gemini",
                "vendor": "test",
                "kind": "request",
                "wire": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            }
        ],
    )
    registry, _ = default_registry()
    real = registry["gemini"]
    assert isinstance(real, ProviderCodec)

    def refuse(payload: JsonObject) -> Request:
        raise DecodeError("contents", "refused by the double")

    doubled = {**registry, "gemini": replace(real, decode_request=refuse)}
    assert run_corpus(load_corpus(tmp_path), registry).ok
    assert not run_corpus(load_corpus(tmp_path), doubled).ok


def test_a_decoder_that_drops_citations_is_caught_by_the_wire_count(tmp_path: Path) -> None:
    """The cross-dialect inventory sees only what the decoder produced; the citations counted
    on the wire (without the codecs) catch a decoder that drops them."""
    vector = json.loads(
        (ROOT / "conformance" / "vectors" / "gemini" / "response_grounding.json").read_text()
    )
    stream = json.loads(
        (ROOT / "conformance" / "vectors" / "gemini" / "stream_grounding.json").read_text()
    )
    _write_corpus(
        tmp_path,
        [
            {"dialect": "gemini", "vendor": "test", "kind": "response", "wire": vector["wire"]},
            {"dialect": "gemini", "vendor": "test", "kind": "stream", "wire": stream["wire"]},
        ],
    )
    registry, _ = default_registry()
    real = registry["gemini"]
    assert isinstance(real, ProviderCodec)

    def uncited(payload: JsonObject) -> Response:
        response = real.decode_response(payload)
        parts = tuple(
            dataclasses.replace(part, citations=()) if isinstance(part, TextPart) else part
            for part in response.message.parts
        )
        message = dataclasses.replace(response.message, parts=parts)
        return dataclasses.replace(response, message=message)

    assert run_corpus(load_corpus(tmp_path), registry).ok
    doubled = {**registry, "gemini": dataclasses.replace(real, decode_response=uncited)}
    failures = run_corpus(load_corpus(tmp_path), doubled).failures
    assert [(f.vector, f.check, f.message) for f in failures] == [
        ("test/one#0", "citations", "3 of 3 citations not decoded")
    ]


_GROQ_STREAM: list[JsonObject] = [
    {
        "data": {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}
            ],
            "x_groq": {"id": "req_1"},
        }
    },
    {
        "data": {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "x_groq": {
                "id": "req_1",
                "usage": {
                    "prompt_tokens": 5,
                    "completion_tokens": 2,
                    "total_tokens": 7,
                    "queue_time": 0.01,
                },
            },
        }
    },
    {"data": "[DONE]"},
]
"""Groq's stream shape as recorded in the corpus: the usage only in the last chunk's
``x_groq.usage``."""


class _UsageBlind:
    """A stream decoder double that drops every usage update (a decoder ignoring a carrier)."""

    def __init__(self, inner: StreamDecoderLike) -> None:
        self.inner = inner

    def feed(self, event: SseEvent) -> list[Update]:
        return [u for u in self.inner.feed(event) if not isinstance(u, UsageUpdate)]

    def finish(self) -> list[Update]:
        return [u for u in self.inner.finish() if not isinstance(u, UsageUpdate)]


def test_usage_a_recorded_stream_carries_must_decode(tmp_path: Path) -> None:
    """The wire, not the decoder, says a stream has usage: Groq's ``x_groq.usage`` decodes,
    and a decoder that ignores it fails the payload."""
    wire: JsonValue = cast(JsonValue, _GROQ_STREAM)
    _write_corpus(
        tmp_path, [{"dialect": "openai_chat", "vendor": "test", "kind": "stream", "wire": wire}]
    )
    registry, _ = default_registry()
    assert run_corpus(load_corpus(tmp_path), registry).ok
    real = registry["openai_chat"]
    assert isinstance(real, ProviderCodec)
    blind = replace(real, stream_decoder=lambda: _UsageBlind(real.stream_decoder()))
    result = run_corpus(load_corpus(tmp_path), {**registry, "openai_chat": blind})
    assert [(f.check, f.field) for f in result.failures][:1] == [("decode", "usage")]
    assert "usage lost" in result.failures[0].message


def test_a_malformed_corpus_file_is_named(tmp_path: Path) -> None:
    _write_corpus(tmp_path, [{"dialect": "cohere", "vendor": "x", "kind": "request", "wire": {}}])
    with pytest.raises(VectorError, match=r"one\.json"):
        load_corpus(tmp_path)


def test_the_cli_runs_the_corpus_and_fails_on_an_unknown_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_corpus(
        tmp_path,
        [{"dialect": "openai_chat", "vendor": "test", "kind": "request", "wire": {"x": 1}}],
    )
    assert main(["--format", "gemini", "--corpus", str(tmp_path)]) == 1
    assert "FAIL (new) test/one#0 [decode]" in capsys.readouterr().out
    assert main(["--format", "gemini", "--corpus", str(tmp_path), "--write-known"]) == 0
    assert main(["--format", "gemini", "--corpus", str(tmp_path)]) == 0


def test_every_degraded_or_refused_payload_says_why_and_every_reason_is_explained() -> None:
    result = corpus_run()
    for name, (_, columns) in result.verdicts.items():
        if {"degraded", "refused"} & set(columns):
            assert result.causes[name], name
    codes = {code for causes in result.causes.values() for _, code in causes}
    assert codes <= set(CAUSES)


def test_an_xai_answer_is_degraded_by_its_encrypted_reasoning_and_summary() -> None:
    result = corpus_run()
    name = "xai/crmne+ruby_llm__vcr_cassettes__chat_basic_chat_functionality_xai_grok-4-1-fast-non-reasoning_can_have_a_basic_conver#1"
    assert result.verdicts[name] == ("xai", ("exact", "degraded"))
    assert result.causes[name] == {
        ("reasoning_encrypted", "opaque_dropped"),
        ("reasoning_summary", "reasoning_dropped"),
        ("reasoning_summary", "reasoning_summary_dropped"),
    }


_GROQ_RUN: JsonObject = {"index": 0, "type": "search", "arguments": "{}", "output": "Sunny"}
_GROQ_COMPOUND: JsonObject = {
    "id": "c",
    "object": "chat.completion",
    "created": 1,
    "model": "groq/compound",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Sunny.", "executed_tools": [_GROQ_RUN]},
            "finish_reason": "stop",
        }
    ],
    "usage_breakdown": {"models": [{"model": "m", "usage": {"total_tokens": 1}}]},
}
"""A Groq compound answer, hand-written from Groq's documented types (no public recording has
``executed_tools``): a test payload, not a corpus one."""


def test_a_decoder_that_drops_groq_runs_is_caught_by_the_wire_count(tmp_path: Path) -> None:
    """The runs and the usage breakdown are counted on the wire: a decoder that ignores them
    fails the payload; the real one decodes them, and every other target refuses or warns
    about the run (no silent drop)."""
    _write_corpus(
        tmp_path,
        [{"dialect": "openai_chat", "vendor": "test", "kind": "response", "wire": _GROQ_COMPOUND}],
    )
    registry, _ = default_registry()
    result = run_corpus(load_corpus(tmp_path), registry)
    assert result.ok, result.failures
    assert result.table()["test"]["refused"] == 1
    real = registry["openai_chat"]
    assert isinstance(real, ProviderCodec)

    def blind(payload: JsonObject) -> Response:
        response = real.decode_response(payload)
        parts = tuple(p for p in response.message.parts if p.kind != "hosted_tool")
        message = dataclasses.replace(response.message, parts=parts)
        return dataclasses.replace(response, message=message, extra={})

    doubled = {**registry, "openai_chat": dataclasses.replace(real, decode_response=blind)}
    failures = run_corpus(load_corpus(tmp_path), doubled).failures
    assert {(f.check, f.field, f.message) for f in failures} >= {
        ("vendor", "executed_tools", "1 of 1 runs not decoded"),
        ("vendor", "usage_breakdown", "usage_breakdown not kept"),
    }
