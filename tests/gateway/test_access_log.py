"""Access lines: what ``interlock serve`` writes to stderr, and that writing them straight to
the configured handler's stream gives the bytes logging's own path gives."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway import access_log
from interlock.gateway.access_log import LOGGER, AccessRecord, _encoded
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

FIELDS = [
    "ts",
    "method",
    "path",
    "status",
    "duration_ms",
    "tenant",
    "model",
    "upstream",
    "translation",
    "stream",
]


@pytest.fixture
def configured() -> Iterator[logging.StreamHandler[io.StringIO]]:
    """The logger as ``configure(True)`` leaves it, its stream a buffer; restored after."""
    saved = (list(LOGGER.handlers), LOGGER.level, LOGGER.propagate)
    for handler in saved[0]:
        LOGGER.removeHandler(handler)
    access_log.configure(True)
    handler = LOGGER.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    buffer = io.StringIO()
    handler.setStream(buffer)  # pyright: ignore[reportUnknownMemberType]  # StringIO is a TextIO
    yield handler  # pyright: ignore[reportReturnType, reportUnknownVariableType]  # stream replaced above
    for handler in list(LOGGER.handlers):
        LOGGER.removeHandler(handler)
    for handler in saved[0]:
        LOGGER.addHandler(handler)
    LOGGER.setLevel(saved[1])
    LOGGER.propagate = saved[2]


def _record(**fields: object) -> AccessRecord:
    record = AccessRecord(method="POST", path="/v1/chat/completions", endpoint="chat", started=0.0)
    for name, value in fields.items():
        setattr(record, name, value)
    return record


def _lines(handler: logging.StreamHandler[io.StringIO]) -> list[str]:
    return handler.stream.getvalue().splitlines(keepends=True)


def test_the_direct_line_is_the_line_logging_writes(
    configured: logging.StreamHandler[io.StringIO],
) -> None:
    record = _record(status=429, tenant="t-é", model="m", error="rate_limited", run_id="r1")
    record.write()  # straight to the stream
    passing = logging.Filter()  # a filter on the logger sends the line through logging
    LOGGER.addFilter(passing)
    try:
        record.write()
    finally:
        LOGGER.removeFilter(passing)
    direct, through_logging = _lines(configured)
    assert direct.endswith("}\n") and through_logging.endswith("}\n")
    first, second = json.loads(direct), json.loads(through_logging)
    assert list(first) == [*FIELDS, "error", "run_id", "outcome", "events"] == list(second)
    for key in ("ts", "duration_ms"):
        del first[key], second[key]
    assert first == second and first["tenant"] == "t-é" and "\\u00e9" in direct


def test_another_handler_sees_every_line_as_a_record(
    configured: logging.StreamHandler[io.StringIO],
) -> None:
    seen: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    capture = Capture()
    LOGGER.addHandler(capture)
    try:
        _record(status=200).write()
    finally:
        LOGGER.removeHandler(capture)
    _record(status=201).write()
    assert [json.loads(line)["status"] for line in _lines(configured)] == [200, 201]
    assert [json.loads(line)["status"] for line in seen] == [200]


def test_access_logs_off_write_nothing(configured: logging.StreamHandler[io.StringIO]) -> None:
    access_log.configure(False)
    _record(status=200).write()
    assert _lines(configured) == []


def test_a_failing_stream_is_reported_by_logging_not_raised(
    configured: logging.StreamHandler[io.StringIO], capsys: pytest.CaptureFixture[str]
) -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError("disk full")

    configured.setStream(Broken())  # pyright: ignore[reportUnknownMemberType]  # a StringIO
    _record(status=200).write()
    assert "disk full" in capsys.readouterr().err


def test_serve_writes_one_json_line_per_request(tmp_path: Path) -> None:
    with emulators_on_loopback() as (emulator_url, _):
        text = gateway_config(emulator_url, "memory://").replace(
            "access_log = false", "access_log = true"
        )
        config = tmp_path / "interlock.toml"
        config.write_text(text)
        with serve(config, tmp_path) as url:
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
            answer = client.chat.completions.create(
                model="via-chat", messages=[{"role": "user", "content": "hello"}]
            )
            with pytest.raises(openai.NotFoundError):
                client.chat.completions.create(
                    model="no-such-model", messages=[{"role": "user", "content": "hi"}]
                )
    assert answer.choices[0].message.content
    log = "".join(path.read_text() for path in tmp_path.glob("serve-*.log"))
    lines = [json.loads(line) for line in log.splitlines() if line.startswith('{"ts"')]
    done, missing = (line for line in lines if line["path"] == "/v1/chat/completions")
    assert list(done) == FIELDS and done["status"] == 200 and done["model"] == "via-chat"
    assert done["upstream"] == "up-chat" and done["duration_ms"] > 0
    assert missing["status"] == 404 and missing["error"]


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_NUMBER = st.one_of(
    st.floats(0, 1e10).map(lambda value: round(value, 3)), st.floats(allow_nan=False)
)


@settings(max_examples=400, deadline=None)
@given(
    texts=st.lists(st.one_of(_TEXT, st.text(st.characters(max_codepoint=127))), min_size=3),
    numbers=st.lists(_NUMBER, min_size=2, max_size=2),
    events=st.integers(0, 10**9),
)
def test_lines_are_what_json_dumps_writes(
    texts: list[str], numbers: list[float], events: int
) -> None:
    fields: dict[str, object] = {"ts": numbers[0], "duration_ms": numbers[1], "events": events}
    fields |= {f"text{index}": text for index, text in enumerate(texts)}
    fields["stream"] = events % 2 == 0
    assert _encoded(fields) == json.dumps(fields, separators=(",", ":"))
