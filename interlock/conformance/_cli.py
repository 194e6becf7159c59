"""``interlock conformance [--format F] [--report FILE] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from interlock.conformance._codecs import default_registry
from interlock.conformance._draft import draft_canonical
from interlock.conformance._node import harness_dir
from interlock.conformance._report import json_matrix, markdown_matrix, summary_table
from interlock.conformance._runner import run_suite
from interlock.conformance._vectors import DIALECTS, VectorError, check_dialect, load_vectors

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_VECTORS = REPOSITORY / "conformance" / "vectors"


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
    if arguments.report:
        Path(arguments.report).write_text(markdown_matrix(result), encoding="utf-8")
    if arguments.json:
        print(summary_table(result), file=sys.stderr)
        print(json.dumps(json_matrix(result), indent=2))
    else:
        print(summary_table(result))
    return 0 if result.ok else 1


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
