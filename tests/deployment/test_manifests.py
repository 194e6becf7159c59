"""The deployment examples are valid and follow docs/deployment.md: the Kubernetes manifest
(parsed as YAML, its embedded config parsed by Interlock's own loader) and the HAProxy
config (``haproxy -c``; the soak runs the same file)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from interlock.gateway.cli import check_exposure
from interlock.gateway.config import parse_config
from interlock.gateway.replicas import check_shared_store
from tests.deployment.cluster import HAPROXY_CONFIG, haproxy_binary
from tests.deployment.harness import ROOT

MANIFEST = ROOT / "examples" / "deployment" / "kubernetes.yaml"


def documents() -> dict[str, dict[str, Any]]:
    with MANIFEST.open() as handle:
        loaded = [document for document in yaml.safe_load_all(handle) if document]
    return {f"{item['kind']}/{item['metadata']['name']}": item for item in loaded}


def test_the_kubernetes_manifest_runs_replicas_that_drain_before_they_are_killed() -> None:
    manifest = documents()
    secret = manifest["Secret/interlock"]["stringData"]
    config = parse_config(
        secret["interlock.toml"],
        {"INTERLOCK_SEAL_KEY": secret["seal-key"], "OPENAI_API_KEY": secret["upstream-key"]},
    )
    check_shared_store(config)  # a redis:// store with a configured seal key
    check_exposure(config, allow_flag=False)  # 0.0.0.0 with client keys
    deployment = manifest["Deployment/interlock"]["spec"]
    assert deployment["replicas"] >= 2
    pod = deployment["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] > config.server.drain_seconds
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    environment = {item["name"]: item["valueFrom"]["secretKeyRef"] for item in container["env"]}
    assert environment[config.server.seal_key_env or ""] == {"name": "interlock", "key": "seal-key"}
    assert "--config" in container["command"]
    redis = manifest["StatefulSet/redis"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert redis[redis.index("--appendonly") + 1] == "yes"
    assert manifest["Service/redis"]["spec"]["ports"][0]["port"] == 6379


def test_the_haproxy_config_is_valid(tmp_path: Path) -> None:
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("haproxy is not installed (.ci/run installs Debian's haproxy)")
    environment = {"INTERLOCK_LB_BIND": "127.0.0.1:8080"}
    environment |= {f"INTERLOCK_REPLICA_{n}": f"127.0.0.1:{8786 + n}" for n in (1, 2, 3)}
    checked = subprocess.run(
        [binary, "-c", "-f", str(HAPROXY_CONFIG)],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    directives = [
        line.split()[0]
        for line in HAPROXY_CONFIG.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert "cookie" not in directives and "stick" not in directives  # no sticky sessions
    text = HAPROXY_CONFIG.read_text()
    assert "GET uri /readyz" in text and "retry-on conn-failure 503" in text
