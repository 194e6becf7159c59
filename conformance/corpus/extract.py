"""Rebuild the real-traffic corpus from the public repositories that recorded it.

Every payload in ``conformance/corpus/payloads/`` was recorded from a real service by the test
suite of a public project (VCR cassettes or raw fixtures) and is copied here unchanged: a
request body, a response body, or a stream (its SSE events, or the elements of Gemini's JSON
array stream). Nothing is written by hand. This script documents (and repeats) the extraction:

    python conformance/corpus/extract.py --checkouts DIR [--fixtures DIR]

``DIR`` holds one git clone per source repository, named ``owner+name`` (e.g.
``crewAIInc+crewAI``); each file is read at the commit pinned in ``SOURCES`` with
``git show <commit>:<path>``. Files of a repository whose clone lacks the pinned commit may be
given as plain files under ``--fixtures DIR/owner+name/<path>``.

What is kept: bodies of the three provider dialects' endpoints (Chat Completions, Responses,
Gemini ``generateContent`` / ``streamGenerateContent``, on OpenAI, Azure, the Gemini API,
Vertex AI, OpenRouter, Mistral, DeepSeek, xAI, Groq, Together, Hugging Face, Databricks and
Cloudflare Workers AI) whose exchange succeeded (HTTP 2xx; a request the service
refused is not evidence that it is valid). Identical payloads are kept once; payloads larger
than ``MAX_BYTES`` (inline images and documents) are left out to keep the corpus small.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # PyYAML reads the cassettes; it is needed only to rebuild the corpus.

MAX_BYTES = 24_000
PER_KIND = 110
"""At most this many payloads of one (vendor, dialect, kind): the corpus stays small and
no single vendor's plain chat dominates it."""
ROOT = Path(__file__).resolve().parent
COMPATIBLE = frozenset(
    {"deepseek", "groq", "xai", "together", "huggingface", "databricks", "cloudflare"}
)
"""OpenAI-compatible services read from repositories whose other cassettes are of vendors the
corpus already holds."""


@dataclass(frozen=True)
class Source:
    repository: str
    commit: str
    licence: str
    pattern: str
    """A regular expression over file paths at ``commit``."""
    kind: str = "cassette"
    """``cassette`` (VCR YAML) or ``fixture:<dialect>:<kind>:<vendor>`` for raw bodies."""
    vendors: frozenset[str] = frozenset()
    """Keep only these vendors' payloads (empty: every vendor's). A repository whose
    cassettes are mostly of vendors the corpus already holds is read for the others only."""


SOURCES = (
    Source(
        "crewAIInc/crewAI",
        "f4731f5025f861c78e3af0487cc80bf5e7c64782",
        "MIT",
        r"^lib/crewai/tests/cassettes/.*\.ya?ml$",
    ),
    Source(
        "simonw/llm",
        "f3f4f29c6e5e623c3776cbf6455dda2345638214",
        "Apache-2.0",
        r"^tests/cassettes/.*\.ya?ml$",
    ),
    Source(
        "simonw/llm-gemini",
        "2a8c855abf701766555b866efe7c80f9a7e27bcf",
        "Apache-2.0",
        r"^tests/cassettes/.*\.ya?ml$",
    ),
    Source(
        "simonw/llm-openrouter",
        "107aa35be076b3943146fee0aa537e03c1dec10f",
        "Apache-2.0",
        r"^tests/cassettes/.*\.ya?ml$",
    ),
    Source(
        "simonw/llm-mistral",
        "bd0e924c6c7c73555cd326da63fcbe608decdf59",
        "Apache-2.0",
        r"^tests/fixtures/reasoning/magistral-(stream\.sse|completion\.json)$",
        "fixture",
    ),
    Source(
        "simonw/llm-mistral",
        "bf77f9bd0fab0ca5ef693b44bc0fe85bbf2465e8",
        "Apache-2.0",
        r"^tests/fixtures/reasoning/magistral-(none|high)-completion\.json$",
        "fixture",
    ),
    Source(
        "crmne/ruby_llm",
        "fb5a49bf04da78d3e74496431ad1c99df5e7e5f0",
        "MIT",
        r"^spec/fixtures/vcr_cassettes/.*(deepseek|_xai_).*\.yml$",  # DeepSeek and xAI only
    ),
    Source(
        "DataDog/dd-trace-py",
        "c6e8389348d028273fe7c94d15a7e5d8d40885de",
        "Apache-2.0",  # dual-licensed Apache-2.0 or BSD-3-Clause; taken under Apache-2.0
        r"^tests/contrib/google_genai/cassettes/.*\.ya?ml$",
    ),
    Source(
        "DataDog/dd-trace-py",
        "3bb9ecda22830e3303b18b0ffa5abe7586aef6a7",
        "Apache-2.0",  # dual-licensed Apache-2.0 or BSD-3-Clause; taken under Apache-2.0
        r"^tests/cassettes/(genai|vertexai)/.*\.ya?ml$",
    ),
    Source(
        "DataDog/dd-trace-py",
        "3bb9ecda22830e3303b18b0ffa5abe7586aef6a7",
        "Apache-2.0",  # dual-licensed Apache-2.0 or BSD-3-Clause; taken under Apache-2.0
        r"^tests/contrib/openai/cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "traceloop/openllmetry",
        "93429cfb9767e6b51db6cb35f6b70f758117669a",
        "Apache-2.0",
        r"^packages/[^/]+/tests/.*cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "posit-dev/chatlas",
        "ea4531130e56d3c5bb003d87a1792dd942554b8d",
        "MIT",
        r"^tests/_vcr/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "Arize-ai/openinference",
        "1fe497f1d9f45a07eee55d97fe185e020560f9c7",
        "Apache-2.0",
        r"^python/instrumentation/.*cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "Scale3-Labs/langtrace-python-sdk",
        "b62abd9b083bbfb04a5b5301f309cb7deaf28187",
        "Apache-2.0",
        r"^src/tests/.*cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "AgentOps-AI/agentops",
        "a855a92dfaa7fd4423f9a68b1ba0295a3a72da80",
        "MIT",
        r"^tests/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "Mirascope/mirascope",
        "41d433578653411dbff96c6eaca4fa869aafc931",
        "MIT",
        r"^python/tests/.*cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
    Source(
        "lmnr-ai/lmnr-python",
        "67dea392f4961bfcf7b5cde3733aaa4a452bb9f9",
        "Apache-2.0",
        r"^tests/.*cassettes/.*\.ya?ml$",
        vendors=COMPATIBLE,
    ),
)

_ENDPOINTS = (
    (r"openrouter\.ai/.*/chat/completions", "openai_chat", "openrouter"),
    (r"openrouter\.ai/.*/responses$", "openai_responses", "openrouter"),
    (r"api\.mistral\.ai/.*/chat/completions", "openai_chat", "mistral"),
    (r"api\.deepseek\.com/(v1/|beta/)?chat/completions$", "openai_chat", "deepseek"),
    (r"api\.groq\.com/openai/v1/chat/completions$", "openai_chat", "groq"),
    (r"api\.x\.ai/v1/chat/completions$", "openai_chat", "xai"),
    (r"api\.x\.ai/v1/responses$", "openai_responses", "xai"),
    (r"api\.together\.(xyz|ai)/v1/chat/completions$", "openai_chat", "together"),
    (r"router\.huggingface\.co/v1/chat/completions$", "openai_chat", "huggingface"),
    (r"\.azuredatabricks\.net/serving-endpoints/chat/completions$", "openai_chat", "databricks"),
    (r"api\.cloudflare\.com/client/v4/accounts/[^/]+/ai/v1/chat/completions$", "openai_chat",
     "cloudflare"),
    (r"\.openai\.azure\.com/.*/chat/completions", "openai_chat", "azure"),
    (r"\.openai\.azure\.com/.*/responses", "openai_responses", "azure"),
    (r"api\.openai\.com/v1/chat/completions", "openai_chat", "openai"),
    (r"api\.openai\.com/v1/responses$", "openai_responses", "openai"),
    (r"aiplatform\.googleapis\.com/.*:(stream)?[gG]enerateContent", "gemini", "vertex"),
    (r"generativelanguage\.googleapis\.com/.*:(stream)?[gG]enerateContent", "gemini", "gemini"),
)


def endpoint(uri: str) -> tuple[str, str] | None:
    """(dialect, vendor) of a request URI, or None when it is not a model call we check."""
    path = uri.split("?", 1)[0]
    for pattern, dialect, vendor in _ENDPOINTS:
        if re.search(pattern, path):
            return dialect, vendor
    return None


def _text(body: Any) -> str | None:
    if isinstance(body, dict):
        body = body.get("string", body.get("base64_string"))
    if isinstance(body, bytes):
        with contextlib.suppress(OSError):
            body = gzip.decompress(body)
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return body if isinstance(body, str) else None


def stream_events(text: str) -> list[dict[str, Any]] | None:
    """The events of an SSE body as ``{"event"?, "data"}`` (data parsed unless ``[DONE]``)."""
    events: list[dict[str, Any]] = []
    for block in re.split(r"\r?\n\r?\n", text):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if not data:
            continue
        joined = "\n".join(data)
        try:
            value: Any = joined if joined == "[DONE]" else json.loads(joined)
        except json.JSONDecodeError:
            return None
        events.append({"event": name, "data": value} if name else {"data": value})
    return events or None


def payloads_of_exchange(uri: str, request: Any, response: Any, status: int) -> list[dict]:
    """The corpus payloads of one recorded exchange (request body, response or stream)."""
    found = endpoint(uri)
    if found is None or not 200 <= status < 300:
        return []
    dialect, vendor = found
    out: list[dict[str, Any]] = []
    request_text = _text(request)
    if request_text:
        try:
            body = json.loads(request_text)
        except json.JSONDecodeError:
            body = None
        if isinstance(body, dict):
            record: dict[str, Any] = {"dialect": dialect, "vendor": vendor, "kind": "request"}
            named = re.search(r"/models/([^/:?]+):", uri)
            if dialect == "gemini" and named:
                record["model"] = named.group(1)  # Gemini names the model in the URL
            out.append({**record, "wire": body})
    response_text = _text(response)
    if response_text:
        out += _response_payloads(dialect, vendor, response_text.strip())
    return out


def _response_payloads(dialect: str, vendor: str, text: str) -> list[dict[str, Any]]:
    base = {"dialect": dialect, "vendor": vendor}
    if re.search(r"^(data|event):", text, re.MULTILINE):
        events = stream_events(text)
        return [{**base, "kind": "stream", "wire": events}] if events else []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        wire = [{"data": item} for item in value]
        return [{**base, "kind": "stream", "wire": wire}]
    if isinstance(value, dict) and not value.get("error"):
        return [{**base, "kind": "response", "wire": value}]
    return []


class _CassetteLoader(yaml.CSafeLoader):
    """The safe loader, reading the Python-object tags some recorders put on header names
    (``!!python/object/apply:multidict._multidict.istr``) as plain data, never as code."""


def _plain(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.SequenceNode):  # a tuple: such values are mapping keys here
        return tuple(loader.construct_sequence(node, deep=True))
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    return loader.construct_scalar(node)


_CassetteLoader.add_multi_constructor("tag:yaml.org,2002:python/", _plain)
_CassetteLoader.add_constructor(  # Ruby's VCR writes non-UTF-8 bodies as ``!binary`` base64
    "!binary", lambda loader, node: base64.b64decode(loader.construct_scalar(node))
)


def cassette_payloads(text: str) -> list[dict[str, Any]]:
    document = yaml.load(text, Loader=_CassetteLoader) or {}
    out: list[dict[str, Any]] = []
    if not isinstance(document, dict):
        return out  # a YAML file beside the cassettes that is not one
    # vcrpy writes ``interactions``; Ruby's VCR (ruby_llm) ``http_interactions``, same fields.
    interactions = document.get("interactions") or document.get("http_interactions") or []
    for interaction in interactions:
        if not isinstance(interaction, dict):
            continue
        request, response = interaction.get("request", {}), interaction.get("response", {})
        status = (response.get("status") or {}).get("code", 200)
        out += payloads_of_exchange(
            request.get("uri", ""), request.get("body"), response.get("body"), int(status)
        )
    return out


def fixture_payloads(path: str, text: str) -> list[dict[str, Any]]:
    """llm-mistral's raw fixtures: bodies recorded from api.mistral.ai (see its metadata)."""
    return _response_payloads("openai_chat", "mistral", text.strip())


def _git(checkout: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(checkout), *args], check=True, capture_output=True, text=True
    ).stdout


def source_files(source: Source, checkouts: Path, fixtures: Path | None) -> dict[str, str]:
    slug = source.repository.replace("/", "+")
    checkout = checkouts / slug
    pattern = re.compile(source.pattern)
    try:
        names = _git(checkout, "ls-tree", "-r", "--name-only", source.commit).splitlines()
        return {
            name: _git(checkout, "show", f"{source.commit}:{name}")
            for name in names
            if pattern.search(name)
        }
    except (subprocess.CalledProcessError, FileNotFoundError):
        if fixtures is None:
            raise SystemExit(f"{slug}: commit {source.commit} not found; give --fixtures") from None
    base = fixtures / slug
    return {
        str(path.relative_to(base)): path.read_text(encoding="utf-8")
        for path in sorted(base.rglob("*"))
        if path.is_file() and pattern.search(str(path.relative_to(base)))
    }


def _slug(path: str) -> str:
    stem = re.sub(r"\.(ya?ml|json|sse)$", "", path.rsplit("/", 2)[-2] + "__" + path.rsplit("/", 1)[-1])
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:100]


def _dump(document: dict[str, Any]) -> str:
    """One payload per line: small files whose diffs still read payload by payload."""
    lines = [json.dumps(payload, ensure_ascii=False) for payload in document["payloads"]]
    source = json.dumps(document["source"], ensure_ascii=False)
    body = ",\n  ".join(lines)
    return f'{{"corpus": 1,\n "source": {source},\n "payloads": [\n  {body}\n ]}}\n'


def build(checkouts: Path, fixtures: Path | None) -> None:
    payload_root = ROOT / "payloads"
    seen: set[str] = set()
    counts: dict[tuple[str, str, str], int] = {}
    manifest: list[dict[str, Any]] = []
    files: dict[Path, dict[str, Any]] = {}
    for source in SOURCES:
        for path, text in sorted(source_files(source, checkouts, fixtures).items()):
            found = cassette_payloads(text) if source.kind == "cassette" else fixture_payloads(path, text)
            kept = []
            for payload in found:
                if source.vendors and payload["vendor"] not in source.vendors:
                    continue
                raw = json.dumps(payload["wire"], sort_keys=True, ensure_ascii=False)
                digest = hashlib.sha256(raw.encode()).hexdigest()
                group = (payload["vendor"], payload["dialect"], payload["kind"])
                if digest in seen or len(raw.encode()) > MAX_BYTES or counts.get(group, 0) >= PER_KIND:
                    continue
                seen.add(digest)
                counts[group] = counts.get(group, 0) + 1
                kept.append(payload)
            if not kept:
                continue
            vendors = sorted({payload["vendor"] for payload in kept})
            name = f"{source.repository.replace('/', '+')}__{_slug(path)}.json"
            target = payload_root / vendors[0] / name
            record = {
                "repository": source.repository,
                "path": path,
                "commit": source.commit,
                "licence": source.licence,
            }
            files[target] = {"corpus": 1, "source": record, "payloads": kept}
            manifest.append({**record, "file": str(target.relative_to(ROOT)), "payloads": len(kept),
                             "vendors": vendors})
    for old in payload_root.rglob("*.json") if payload_root.exists() else []:
        old.unlink()
    for target, document in files.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_dump(document), encoding="utf-8")
    (ROOT / "manifest.json").write_text(
        json.dumps({"corpus": 1, "sources": manifest}, indent=1) + "\n", encoding="utf-8"
    )
    total = sum(entry["payloads"] for entry in manifest)
    print(f"{total} payloads from {len(manifest)} files", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkouts", type=Path, required=True)
    parser.add_argument("--fixtures", type=Path)
    arguments = parser.parse_args()
    build(arguments.checkouts, arguments.fixtures)


if __name__ == "__main__":
    main()
