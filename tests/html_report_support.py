"""Reports for the HTML report tests: the example project's real runs and a synthetic format-2 report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "example_project"
REGRESSION = EXAMPLE / "recordings" / "regression.jsonl"
MALICIOUS = '</script><script>window.pwned = 1</script><img src="https://example.invalid/x.png">'


def run_example(report: Path, *options: str) -> dict[str, Any]:
    """Run `pytest example_project` in a subprocess; read its JSON report (the HTML one lies beside it)."""
    command = [sys.executable, "-m", "pytest", str(EXAMPLE), "-p", "no:cacheprovider", "-q"]
    completed = subprocess.run(
        [
            *command,
            "--graphrag-report",
            str(report),
            "--graphrag-html",
            str(report.with_suffix(".html")),
            *options,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = completed.stdout[-3000:] + completed.stderr[-3000:]
    assert report.exists(), f"the example run wrote no report:\n{output}"
    return json.loads(report.read_text(encoding="utf-8"))


def with_malicious_answer(report: dict[str, Any]) -> dict[str, Any]:
    """A copy whose first answer and step output try to break out of the page."""
    copy = json.loads(json.dumps(report))
    first = copy["results"][0]
    first["actual_answer"] = MALICIOUS
    first["question_text"] = "<b>bold?</b> " + first["question_text"]
    for step in first.get("actual_steps") or []:
        step["output"] = MALICIOUS
    return copy
