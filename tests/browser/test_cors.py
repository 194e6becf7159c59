"""The official ``@ag-ui/client`` ``HttpAgent`` in headless Chromium, in a page on another
origin (a second loopback port), against ``interlock serve``: with the page's origin in
``server.cors_origins`` a run with an approval completes and the tool runs exactly once;
without it the browser is refused and nothing runs.
"""

from __future__ import annotations

from pathlib import Path

from tests.browser.harness import interlock_serve, requires_browser, run_node
from tests.gateway.agui.counted import executions
from tests.gateway.serving import free_port

pytestmark = requires_browser


def test_http_agent_on_another_origin_completes_a_run_with_an_approval(tmp_path: Path) -> None:
    page_port = free_port()
    lines = f'cors_origins = ["http://127.0.0.1:{page_port}"]'
    with interlock_serve(tmp_path, lines) as url:
        verdict = run_node("cors_run.mjs", url, "assistant", str(page_port), "/srv/allowed.db")
    assert verdict["origin"] == f"http://127.0.0.1:{page_port}" != url
    assert verdict.get("error") is None and verdict["ok"], verdict
    first, second = verdict["runs"]
    assert first["outcome"]["type"] == "interrupt"
    assert first["types"][0] == "RUN_STARTED" and first["types"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" in second["types"] and second["outcome"]["type"] == "success"
    assert executions(tmp_path / "counts", "delete_file", "/srv/allowed.db") == 1


def test_a_page_whose_origin_is_not_allowed_is_refused(tmp_path: Path) -> None:
    page_port = free_port()
    with interlock_serve(tmp_path, 'cors_origins = ["http://127.0.0.1:1"]') as url:
        verdict = run_node("cors_run.mjs", url, "assistant", str(page_port), "/srv/refused.db")
    assert verdict.get("error") is None, verdict
    (run,) = verdict["runs"]
    assert not verdict["ok"] and run["error"] and "RUN_STARTED" not in run["types"]
    assert executions(tmp_path / "counts", "delete_file", "/srv/refused.db") == 0
    assert any("CORS" in line or "Failed to fetch" in line for line in verdict["console"]), verdict
