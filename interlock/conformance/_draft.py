"""Drafting a vector's expected canonical form from the current codec.

This only *bootstraps* a new vector: the draft must then be reviewed by hand against the wire
(a vector whose expectation copies a buggy decode proves nothing). The file is rewritten with
``canonical`` filled in; everything else is kept as written.
"""

from __future__ import annotations

import json
from pathlib import Path

from interlock.conformance._codecs import AguiCodec, Registry
from interlock.conformance._same import decode_stream, sse_event
from interlock.conformance._vectors import VectorError, load_vector
from interlock.transcript import (
    JsonObject,
    dump_request,
    dump_response,
    dump_transcript,
    fold_updates,
)


def draft_canonical(path: Path, registry: Registry) -> JsonObject:
    """Decode the vector at ``path`` with its codec and write the result as its ``canonical``."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document.setdefault("canonical", {})
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    vector = load_vector(path)
    codec = registry.get(vector.dialect)
    if codec is None:
        raise VectorError(path, f"no {vector.dialect} codec to draft with")
    if isinstance(codec, AguiCodec):
        if vector.kind != "run_input":
            raise VectorError(path, "events vectors state their canonical response by hand")
        canonical = dump_transcript(codec.decode_run_input(vector.wire_object))
    elif vector.kind == "request":
        canonical = dump_request(codec.decode_request(vector.wire_object))
    elif vector.kind == "response":
        canonical = dump_response(codec.decode_response(vector.wire_object))
    else:
        events = [sse_event(event.data, event.event) for event in vector.stream_events]
        canonical = dump_response(fold_updates(decode_stream(codec, events)))
    document["canonical"] = canonical
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return canonical
