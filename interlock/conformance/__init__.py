"""The codec conformance suite: vectors, the runner, and the fidelity matrix.

``interlock conformance`` (the gateway CLI delegates to :func:`main`) loads
``conformance/vectors/<dialect>/*.json``, checks each vector in its own dialect (exact round
trip, canonical identity, SDK validation, the official AG-UI client), translates it into every
other dialect (content kept, degraded with a warning, or refused — never silently lost), and
writes the fidelity matrix (``docs/fidelity.md``).
"""

from interlock.conformance._cli import main
from interlock.conformance._codecs import (
    AguiCodec,
    CodecUnavailable,
    ProviderCodec,
    Registry,
    Target,
    default_registry,
    provider_codec,
)
from interlock.conformance._compare import Outcome
from interlock.conformance._report import json_matrix, markdown_matrix, summary_table
from interlock.conformance._results import Failure, SuiteResult
from interlock.conformance._runner import run_suite
from interlock.conformance._vectors import (
    DIALECTS,
    Vector,
    VectorError,
    load_vector,
    load_vectors,
)

__all__ = [
    "DIALECTS",
    "AguiCodec",
    "CodecUnavailable",
    "Failure",
    "Outcome",
    "ProviderCodec",
    "Registry",
    "SuiteResult",
    "Target",
    "Vector",
    "VectorError",
    "default_registry",
    "json_matrix",
    "load_vector",
    "load_vectors",
    "main",
    "markdown_matrix",
    "provider_codec",
    "run_suite",
    "summary_table",
]
