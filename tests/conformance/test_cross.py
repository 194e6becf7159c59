"""Cross-dialect checks: a recorded response becomes history as a real conversation had it."""

from __future__ import annotations

from pathlib import Path

from interlock.conformance import default_registry
from interlock.conformance._codecs import ProviderCodec
from interlock.conformance._corpus_files import CorpusPayload, load_corpus
from interlock.conformance._cross import CrossDialect, source_of
from interlock.conformance._results import Collector

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus"
TOOL_CALL = "xai/crmne+ruby_llm__vcr_cassettes__chat_function_calling_xai_grok-4-1-fast-non-reasoning_can_use_tools#1"


def _payload(name: str) -> CorpusPayload:
    return next(payload for payload in load_corpus(CORPUS) if payload.name == name)


def test_a_response_that_calls_tools_becomes_history_that_declares_them() -> None:
    payload = _payload(TOOL_CALL)
    registry, _ = default_registry()
    codec = registry["openai_responses"]
    assert isinstance(codec, ProviderCodec)
    response = codec.decode_response(payload.body)
    called = [call.name for call in response.message.tool_calls]
    assert called == ["weather"]
    source = source_of(payload.name, payload.dialect, response)
    assert [tool.name for tool in source.history.tools] == called


def test_anthropic_does_not_refuse_a_recorded_tool_call_for_want_of_tool_definitions() -> None:
    payload = _payload(TOOL_CALL)
    registry, _ = default_registry()
    responses, anthropic = registry["openai_responses"], registry["anthropic"]
    assert isinstance(responses, ProviderCodec) and isinstance(anthropic, ProviderCodec)
    source = source_of(payload.name, payload.dialect, responses.decode_response(payload.body))
    found = Collector()
    CrossDialect(source, anthropic, anthropic.targets[0], found).run()
    assert not found.failures
    assert not [note for note in found.notes if "must define tools" in note]
    outcomes = found.cells[("openai_responses", "anthropic", "tool_call")]
    assert outcomes["strict"] == {"translated"}
