"""The runner against test doubles: it passes good codecs and catches each kind of loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.conformance import (
    Registry,
    SuiteResult,
    json_matrix,
    load_vectors,
    markdown_matrix,
    run_suite,
    summary_table,
)
from interlock.transcript import (
    JsonPart,
    Message,
    Opaque,
    ReasoningPart,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    dump_request,
    dump_response,
    to_json,
)
from tests.conformance.doubles import signature_dropping_codec, transcript_codec

SIGNATURE = Opaque(provider="google", format="gemini.thought_signature", data="CiIB4/H/Xk==")
ENCRYPTED = Opaque(provider="openai", format="openai.responses.encrypted_content", data="gAAAAB")


def gemini_history() -> Request:
    return Request(
        model="gemini-3-flash-preview",
        messages=(
            Message(role="user", parts=(TextPart(text="Weather in Paris?"),)),
            Message(
                role="assistant",
                parts=(
                    ToolCallPart(
                        call_id="c1",
                        name="get_weather",
                        arguments='{"city":"Paris"}',
                        signature=SIGNATURE,
                    ),
                ),
            ),
            Message(
                role="tool",
                parts=(
                    ToolResultPart(
                        call_id="c1", name="get_weather", output=(JsonPart(value={"temp_c": 15}),)
                    ),
                ),
            ),
        ),
    )


def responses_answer() -> Response:
    return Response(
        id="resp_1",
        model="gpt-5.5",
        finish_reason="tool_calls",
        usage=Usage(input_tokens=10, output_tokens=30, reasoning_tokens=20),
        message=Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="summary", text="Looking it up", item_id="rs_1"),
                ReasoningPart(reasoning_kind="encrypted", opaque=ENCRYPTED, item_id="rs_1"),
                ToolCallPart(call_id="call_1", name="get_weather", arguments='{"city":"Paris"}'),
            ),
        ),
    )


def write_vector(root: Path, dialect: str, case: str, value: Request | Response) -> Path:
    kind = "request" if isinstance(value, Request) else "response"
    canonical = dump_request(value) if isinstance(value, Request) else dump_response(value)
    document = {
        "vector": 1,
        "dialect": dialect,
        "kind": kind,
        "description": f"{case} (test double wire: the transcript serialization)",
        "origin": "tests/conformance/test_runner.py",
        "wire": to_json(value),
        "canonical": canonical,
    }
    path = root / dialect / f"{case}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def vectors_root(tmp_path: Path) -> Path:
    write_vector(tmp_path, "gemini", "signed_call", gemini_history())
    write_vector(tmp_path, "openai_responses", "encrypted_reasoning", responses_answer())
    return tmp_path


def run(root: Path, registry: Registry) -> SuiteResult:
    return run_suite(load_vectors(root), registry)


def good_registry() -> dict[str, object]:
    return {name: transcript_codec(name) for name in ("openai_responses", "gemini")}


def test_good_codecs_hold_and_fill_the_matrix(vectors_root: Path) -> None:
    result = run(vectors_root, good_registry())  # type: ignore[arg-type]  # a plain dict of doubles
    assert result.failures == ()
    assert result.ok
    assert result.cell(("gemini", "gemini", "signature_on_call")) == ("exact", "exact")
    assert result.cell(("gemini", "openai_responses", "signature_on_call")) == (
        "degraded",
        "degraded",
    )
    assert result.cell(("gemini", "openai_responses", "tool_call")) == ("translated", "translated")
    # a call without a signature cannot go to Gemini strictly; degrade mode uses the dummy
    assert result.cell(("openai_responses", "gemini", "tool_call")) == ("refused", "translated")
    assert result.cell(("openai_responses", "gemini", "reasoning_encrypted"))[1] == "degraded"
    assert result.cell(("openai_responses", "gemini", "usage")) == ("translated", "translated")


def test_a_codec_that_drops_a_signature_is_caught_naming_vector_and_field(
    vectors_root: Path,
) -> None:
    registry = {**good_registry(), "gemini": signature_dropping_codec("gemini")}
    result = run(vectors_root, registry)  # type: ignore[arg-type]
    assert not result.ok
    decode = [f for f in result.failures if f.check == "decode"]
    assert decode, result.failures
    assert decode[0].vector == "gemini/signed_call"
    assert decode[0].field == "$.request.messages[1].parts[0].signature"
    assert "gemini/signed_call [decode] $.request.messages[1].parts[0].signature" in summary_table(
        result
    )


def test_a_silent_drop_across_dialects_is_a_failure(vectors_root: Path) -> None:
    registry = {
        **good_registry(),
        "openai_responses": transcript_codec("openai_responses", silent=True),
    }
    result = run(vectors_root, registry)  # type: ignore[arg-type]
    lost = [f for f in result.failures if "lost" in f.message]
    assert [(f.vector, f.field) for f in lost][:1] == [
        ("gemini/signed_call", "messages[1].parts[0]")
    ]
    assert "signature_on_call lost" in lost[0].message


def test_sending_a_foreign_opaque_payload_is_a_failure(vectors_root: Path) -> None:
    registry = {
        **good_registry(),
        "openai_responses": transcript_codec("openai_responses", leak=True),
    }
    result = run(vectors_root, registry)  # type: ignore[arg-type]
    leaked = [f for f in result.failures if "leaked" in f.message]
    assert leaked and leaked[0].vector == "gemini/signed_call"
    assert "google gemini.thought_signature sent to openai_responses" in leaked[0].message


def test_a_missing_codec_fails_its_vectors(vectors_root: Path) -> None:
    result = run_suite(load_vectors(vectors_root), {}, unavailable={"gemini": "not written yet"})
    assert any(
        f.vector == "gemini/signed_call" and "not written yet" in f.message for f in result.failures
    )


def test_reports(vectors_root: Path) -> None:
    result = run(vectors_root, good_registry())  # type: ignore[arg-type]
    markdown = markdown_matrix(result)
    assert "## From `gemini`" in markdown
    assert "| `tool_call` |" in markdown
    assert "refused → translated" in markdown
    assert markdown == markdown_matrix(run(vectors_root, good_registry()))  # type: ignore[arg-type]
    matrix = json_matrix(result)
    assert matrix["ok"] is True
    assert matrix["matrix"]["gemini"]["openai_responses"]["signature_on_call"] == {  # type: ignore[index]
        "strict": "degraded",
        "degrade": "degraded",
    }


def test_progress_line_per_dialect(vectors_root: Path) -> None:
    lines: list[str] = []
    run_suite(load_vectors(vectors_root), good_registry(), progress=lines.append)  # type: ignore[arg-type]
    assert [line.split()[0] for line in lines] == ["openai_responses", "gemini"]
    assert all("ok" in line for line in lines)
