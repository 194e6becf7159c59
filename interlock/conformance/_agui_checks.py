"""Same-dialect checks of an AG-UI vector.

A ``run_input`` vector: the ``RunAgentInput`` decodes to the stated transcript; its messages
encode back to the same AG-UI messages; canonical → AG-UI → canonical is the identity. An
``events`` vector: the canonical response, encoded as one run, gives exactly the recorded
events. Every encoded trace (and every recorded one) is queued for the official client.
"""

from __future__ import annotations

from interlock.conformance._codecs import AguiCodec
from interlock.conformance._results import Collector, first_difference, value_at
from interlock.conformance._same import CODEC_ERRORS
from interlock.conformance._vectors import Vector
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Request,
    Response,
    dump_response,
    dump_transcript,
    load_response,
    load_transcript,
)


class AguiChecks:
    """The checks of one AG-UI vector; ``traces`` collects event lists for the Node client."""

    def __init__(self, vector: Vector, codec: AguiCodec, found: Collector) -> None:
        self.vector = vector
        self.codec = codec
        self.found = found
        self.traces: dict[str, list[JsonObject]] = {}

    def run(self) -> Request | Response | None:
        """Run the checks of the vector's kind; the decoded canonical value, if any."""
        try:
            return self._run_input() if self.vector.kind == "run_input" else self._events()
        except CODEC_ERRORS as error:
            field = getattr(error, "path", getattr(error, "location", "")) or "-"
            self.found.fail(self.vector.name, "codec", field, repr(error))
            return None

    def _expect(self, check: str, actual: JsonValue, expected: JsonValue, what: str) -> None:
        path = first_difference(actual, expected)
        if path is None:
            self.found.passed()
            return
        got, want = value_at(actual, path), value_at(expected, path)
        self.found.fail(
            self.vector.name, check, path, f"{what}: got {got!r:.120}, expected {want!r:.120}"
        )

    def _run_input(self) -> Request:
        wire = self.vector.wire_object
        messages = self.codec.decode_run_input(wire)
        self._expect(
            "decode", dump_transcript(messages), self.vector.canonical, "decoded transcript"
        )
        encoded = self.codec.encode_messages(messages)
        self._expect("round-trip", list(encoded), wire.get("messages"), "decode → encode")
        expected = load_transcript(self.vector.canonical)
        again = self.codec.decode_run_input(
            {**wire, "messages": list(self.codec.encode_messages(expected))}
        )
        self._expect(
            "identity",
            dump_transcript(again),
            self.vector.canonical,
            "canonical → AG-UI → canonical",
        )
        snapshot: JsonObject = {"type": "MESSAGES_SNAPSHOT", "messages": list(encoded)}
        self.traces[f"{self.vector.name}#messages"] = [*self._bracket(snapshot)]
        return Request(model="agui", messages=messages)

    def _bracket(self, event: JsonObject) -> list[JsonObject]:
        run: JsonObject = {"threadId": "conformance", "runId": "conformance"}
        return [
            {"type": "RUN_STARTED", **run, "protocolVersion": "1.0"},
            event,
            {"type": "RUN_FINISHED", **run},
        ]

    def _events(self) -> Response:
        response = load_response(self.vector.canonical)
        events = self.codec.encode_events(response, self.vector.run)
        self._expect("encode", list(events), list(self.vector.wire_events), "encoded events")
        self.traces[f"{self.vector.name}#encoded"] = list(events)
        self.traces[f"{self.vector.name}#recorded"] = list(self.vector.wire_events)
        self._expect("identity", dump_response(response), self.vector.canonical, "canonical load")
        return response
