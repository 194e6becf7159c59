"""The ``interlock`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="interlock", description="A protocol gateway for agent traffic."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gateway")
    serve.add_argument("--config", help="TOML config file (default: the embedded demo)")
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8787)")
    emulate = commands.add_parser("emulate", help="run a provider emulator")
    emulate.add_argument(
        "--protocol", required=True, choices=["openai-responses", "openai-chat", "gemini"]
    )
    emulate.add_argument("--port", type=int, default=8790)
    emulate.add_argument("--script", help="script file of responses / stream traces")
    conformance = commands.add_parser("conformance", help="run the codec conformance suite")
    conformance.add_argument("--format", help="only this dialect")
    conformance.add_argument("--report", help="write the fidelity matrix (Markdown) here")
    conformance.add_argument("--json", action="store_true", help="print the matrix as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``interlock`` console script."""
    arguments = build_parser().parse_args(argv)
    print(f"interlock {arguments.command}: not implemented yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
