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
    """Run `pytest example_project` in a subprocess and read the JSON report it writes."""
    command = [sys.executable, "-m", "pytest", str(EXAMPLE), "-p", "no:cacheprovider", "-q"]
    completed = subprocess.run(
        [*command, "--graphrag-report", str(report), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = completed.stdout[-3000:] + completed.stderr[-3000:]
    assert report.exists(), f"the example run wrote no report:\n{output}"
    return json.loads(report.read_text(encoding="utf-8"))


def with_comparison(baseline: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """`current` with the `comparison` section the compare package computes against `baseline`."""
    from pytest_graphrag_eval.compare import compare_reports

    # The example's reports record each outcome; the baseline check asks for the format number saying so.
    baseline = {**baseline, "format_version": max(2, baseline["format_version"])}
    comparison = compare_reports(baseline, current["results"], baseline_path="reports/main.json")
    return {**current, "format_version": 2, "comparison": comparison.to_dict()}


def with_malicious_answer(report: dict[str, Any]) -> dict[str, Any]:
    """A copy whose first answer and step output try to break out of the page."""
    copy = json.loads(json.dumps(report))
    first = copy["results"][0]
    first["actual_answer"] = MALICIOUS
    first["question_text"] = "<b>bold?</b> " + first["question_text"]
    for step in first.get("actual_steps") or []:
        step["output"] = MALICIOUS
    return copy
