"""``interlock conformance [--format F] [--report FILE] [--json] [--corpus [DIR]]``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from interlock.conformance._codecs import default_registry
from interlock.conformance._corpus import run_corpus
from interlock.conformance._corpus_files import load_corpus
from interlock.conformance._corpus_report import corpus_markdown, known_text, ledger, read_known
from interlock.conformance._draft import draft_canonical
from interlock.conformance._node import harness_dir
from interlock.conformance._report import json_matrix, markdown_matrix, summary_table
from interlock.conformance._runner import run_suite
from interlock.conformance._vectors import DIALECTS, VectorError, check_dialect, load_vectors

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_VECTORS = REPOSITORY / "conformance" / "vectors"
DEFAULT_CORPUS = REPOSITORY / "conformance" / "corpus"


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments (the gateway CLI delegates ``conformance`` here)."""
    parser = argparse.ArgumentParser(
        prog="interlock conformance", description="Run the codec conformance suite."
    )
    parser.add_argument("--format", help=f"only this dialect's vectors ({', '.join(DIALECTS)})")
    parser.add_argument("--report", help="write the fidelity matrix (Markdown) to this file")
    parser.add_argument("--json", action="store_true", help="print the matrix and findings as JSON")
    parser.add_argument("--vectors", default=str(DEFAULT_VECTORS), help="vector directory")
    parser.add_argument(
        "--corpus",
        nargs="?",
        const=str(DEFAULT_CORPUS),
        metavar="DIR",
        help="also run the real-traffic corpus (default conformance/corpus)",
    )
    parser.add_argument(
        "--write-known",
        action="store_true",
        help="with --corpus: rewrite known-failures.txt from this run",
    )
    parser.add_argument(
        "--draft",
        nargs="+",
        metavar="FILE",
        help="fill in the canonical form of new vector files from the codec, for review by hand",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite; exit status 0 only when every check holds (2: bad arguments or vectors)."""
    arguments = build_parser().parse_args(argv)
    if arguments.draft:
        return _draft(arguments.draft)
    try:
        dialects = [check_dialect(arguments.format)] if arguments.format else list(DIALECTS)
        vectors = load_vectors(Path(arguments.vectors), dialects)
    except (ValueError, VectorError) as error:
        print(f"interlock conformance: {error}", file=sys.stderr)
        return 2
    if not vectors:
        print(f"interlock conformance: no vectors under {arguments.vectors}", file=sys.stderr)
        return 2
    registry, unavailable = default_registry()
    stream = sys.stderr if arguments.json else sys.stdout

    def progress(line: str) -> None:
        print(line, file=stream)

    result = run_suite(
        vectors,
        registry,
        unavailable=unavailable,
        harness=harness_dir(REPOSITORY),
        progress=progress,
    )
    report = markdown_matrix(result)
    corpus_ok = True
    if arguments.corpus:
        try:
            section, corpus_ok = _corpus(Path(arguments.corpus), arguments.write_known, stream)
        except (ValueError, VectorError) as error:
            print(f"interlock conformance: {error}", file=sys.stderr)
            return 2
        report += "\n" + section
    if arguments.report:
        Path(arguments.report).write_text(report, encoding="utf-8")
    if arguments.json:
        print(summary_table(result), file=sys.stderr)
        print(json.dumps(json_matrix(result), indent=2))
    else:
        print(summary_table(result))
    return 0 if result.ok and corpus_ok else 1


def _corpus(root: Path, write_known: bool, stream: TextIO) -> tuple[str, bool]:
    """Run the corpus; its report section, and whether its ledger holds."""
    payloads = load_corpus(root)
    if not payloads:
        raise ValueError(f"no corpus payloads under {root}")
    registry, _ = default_registry()
    result = run_corpus(payloads, registry)
    known_path = root / "known-failures.txt"
    if write_known:
        known_path.write_text(known_text(result), encoding="utf-8")
    found = ledger(result, read_known(known_path))
    print(
        f"corpus: {len(payloads)} payloads, {len(result.failures)} failures "
        f"({found.known} known, {len(found.new)} new, {len(found.stale)} fixed but still listed)",
        file=stream,
    )
    for line in found.new:
        print(f"FAIL (new) {line}", file=stream)
    for line in found.stale:
        print(f"FIXED (remove from {known_path.name}) {line}", file=stream)
    return corpus_markdown(result, len({p.name.partition("#")[0] for p in payloads})), found.ok


def _draft(paths: Sequence[str]) -> int:
    registry, _ = default_registry()
    for path in paths:
        try:
            draft_canonical(Path(path), registry)
        except (ValueError, VectorError) as error:
            print(f"interlock conformance: {error}", file=sys.stderr)
            return 2
        print(f"drafted {path}: review its canonical form against the wire by hand")
    return 0
