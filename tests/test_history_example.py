"""The example project recorded over several runs, as docs/history.md walks through it.

On a copy of example_project/: the recording replayed, then the regressed release's recording,
then the recording again, then the recording with its queries re-executed on release 2 of the
grid. `flaky` names the questions both the regression and the release broke, `trend` shows the
two dips and marks the graph change; the regenerated report of run 2 is the one run 2 wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RELEASE_2 = ["--graphrag-sparql-endpoint", "grid/release-2/grid.ttl", "--graphrag-execute", "agent"]
RUNS = [
    ["--graphrag-responses", "recordings/responses.jsonl"],
    ["--graphrag-responses", "recordings/regression.jsonl"],
    ["--graphrag-responses", "recordings/responses.jsonl"],
    ["--graphrag-responses", "recordings/responses.jsonl", *RELEASE_2],
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    example = tmp_path_factory.mktemp("history") / "example_project"
    shutil.copytree(
        ROOT / "example_project", example, ignore=shutil.ignore_patterns("reports", "__pycache__")
    )
    for number, args in enumerate(RUNS, start=1):
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
        command += ["--graphrag-history=history.db", f"--graphrag-history-run-key=night-{number}"]
        command += [
            "--graphrag-report",
            f"reports/run-{number}.json",
            "--graphrag-html",
            f"reports/run-{number}.html",
        ]
        done = subprocess.run(command, cwd=example, capture_output=True, text=True, check=False)
        assert f"history: recorded run {number} (night-{number})" in done.stdout, done.stdout + done.stderr
    return example


def history(example: Path, *args: str) -> str:
    command = [sys.executable, "-m", "pytest_graphrag_eval.commands.history", "history.db", *args]
    environ = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run(command, cwd=example, capture_output=True, text=True, check=True, env=environ)
    if "--json" not in args:  # text fits the terminal, whole
        assert all(len(line) <= 80 and "…" not in line for line in done.stdout.splitlines()), done.stdout
    return done.stdout


def test_list_shows_the_two_red_runs(recorded: Path) -> None:
    runs = json.loads(history(recorded, "list", "--json"))
    assert [(run["run_key"], run["passed"], run["failed"]) for run in runs] == [
        ("night-4", False, 6),
        ("night-3", True, 0),
        ("night-2", False, 9),
        ("night-1", True, 0),
    ]


def test_flaky_names_what_the_regression_and_the_release_both_broke(recorded: Path) -> None:
    out = history(recorded, "flaky", "--min-flips", "3")
    assert "3 flaky question(s) over the last 4 run(s): flipped >= 3 times" in out
    for question in ("ac-lines-no2-no5", "capacity-no1", "capacity-no2"):
        assert f"3 flips    2P   2F  PFPF  {question}" in out
    twice = json.loads(history(recorded, "flaky", "--json"))["flaky"]  # the run's default: 2 flips
    # the regression's other questions flipped there and back once
    assert {item["question_id"] for item in twice if item["strip"] == "PFPP"} == {
        "ac-lines-no1-no2",
        "capacity-no4",
        "connected-roros",
        "lines-by-length-drammen",
        "lines-by-length-narvik",
        "lines-by-length-tonstad",
    }
    assert all(item["mixed_commits"] == [] for item in twice)


def test_trend_shows_the_dips_and_marks_the_graph_release(recorded: Path) -> None:
    out = history(recorded, "trend", "steps_score.mean").splitlines()
    assert [line.split()[4] for line in out[2:6]] == ["1.0000", "0.6522", "1.0000", "0.7500"]
    assert out[5].endswith("<- graph, responses")
    assert out[3].endswith("<- responses")


def test_a_past_report_is_regenerated_as_it_was_written(recorded: Path) -> None:
    history(recorded, "report", "night-2", "--report", "again.json", "--html", "again.html")
    assert (recorded / "again.json").read_bytes() == (recorded / "reports" / "run-2.json").read_bytes()
    assert (recorded / "again.html").read_bytes() == (recorded / "reports" / "run-2.html").read_bytes()
