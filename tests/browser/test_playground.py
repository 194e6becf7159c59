"""The playground page in headless chromium against ``interlock serve``: approval cards
approved, rejected and approved with edited arguments, a run that goes on across a page
reload, a run stopped from the page after a reload,
the page's frontend tool answered, reasoning text shown before the answer it
precedes, a ``confirm_changes`` card accepted; a screenshot kept as an artifact (pytest's
tmp dir)."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx

from tests.browser.harness import interlock_serve, requires_browser, run_node
from tests.gateway.agui.counted import executions


def test_the_page_and_its_agents_are_served(tmp_path: Path) -> None:
    with interlock_serve(tmp_path) as url:
        page = httpx.get(f"{url}/", timeout=10)
        script = httpx.get(f"{url}/playground/app.js", timeout=10)
        agents = httpx.get(f"{url}/agui", timeout=10).json()["agents"]
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/playground/app.js">' in page.text
    assert script.headers["content-type"].startswith("text/javascript")
    assert {"name": "assistant", "approvalStyle": "interrupt"} in agents


@requires_browser
def test_approve_in_the_playground_and_reload_mid_run(tmp_path: Path) -> None:
    path_tag, paced_tag = f"pg-{uuid.uuid4().hex[:8]}", f"pg-{uuid.uuid4().hex[:8]}"
    screenshot = tmp_path / "playground.png"
    with interlock_serve(tmp_path) as url:
        verdict = run_node("playground.mjs", url, path_tag, paced_tag, str(screenshot))
    assert verdict["ok"], (verdict.get("error"), verdict.get("steps"))
    assert verdict["steps"] == [
        "loaded",
        "approved",
        "rejected and edited",
        "reloaded",
        "continued",
        "stopped after reload",
        "frontend tool",
        "reasoning before answer",
        "confirm_changes",
    ]
    counts = tmp_path / "counts"
    assert executions(counts, "delete_file", path_tag) == 1
    assert executions(counts, "paced_task", paced_tag) == 1
    assert executions(counts, "paced_task", f"{paced_tag}-stop", "started") == 1
    assert executions(counts, "paced_task", f"{paced_tag}-stop") == 0  # stopped, never finished
    assert executions(counts, "delete_file", f"{path_tag}-c") == 1
    assert executions(counts, "delete_file", f"{path_tag}-r") == 0
    assert executions(counts, "delete_file", f"{path_tag}-e") == 0
    assert executions(counts, "delete_file", f"{path_tag}-edited") == 1
    assert screenshot.stat().st_size > 10_000
