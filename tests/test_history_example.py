"""The example project recorded over several runs, as docs/history.md walks through it.

On a copy of example_project/: the recording replayed, then the regressed release's recording,
then the recording again, then the recording with its queries re-executed on release 2 of the
grid — and the four nights once more. Every flip came with other responses or another graph, so
`flaky` names nothing, and the broken recording against `history:last-passed` fails
`regressions<=0 excluding flaky`: a release that breaks the same questions again is not noise.
`trend` shows the two dips and marks the graph change; the regenerated report of run 2 is the one
run 2 wrote.
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
    for number, args in enumerate(RUNS + RUNS, start=1):
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


def test_list_shows_the_red_runs(recorded: Path) -> None:
    runs = json.loads(history(recorded, "list", "--json", "--limit", "4"))
    assert [(run["run_key"], run["passed"], run["failed"]) for run in runs] == [
        ("night-8", False, 6),
        ("night-7", True, 0),
        ("night-6", False, 9),
        ("night-5", True, 0),
    ]


def test_nothing_is_flaky_when_every_flip_came_with_other_inputs(recorded: Path) -> None:
    out = history(recorded, "flaky", "--last", "8", "--min-flips", "1")
    assert "0 flaky question(s) over the last 8 run(s): flipped >= 1 times" in out
    assert json.loads(history(recorded, "flaky", "--json", "--last", "8"))["flaky"] == []


def test_excluding_flaky_never_excuses_the_broken_release_again(recorded: Path) -> None:
    shutil.copyfile(recorded / "history.db", recorded / "again.db")  # the other tests read the eight
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *RUNS[1]]
    command += ["--graphrag-history=again.db", "--graphrag-baseline=history:last-passed"]
    command += ["--graphrag-gate=regressions<=0 excluding flaky", "--graphrag-report=reports/again.json"]
    done = subprocess.run(command, cwd=recorded, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads((recorded / "reports" / "again.json").read_text(encoding="utf-8"))
    gate = next(gate for gate in report["gates"] if "excluding flaky" in gate["expression"])
    assert not gate["passed"] and gate["actual"] == 9 and gate["excluding_flaky"] == []
    assert report["comparison"]["baseline"]["path"].startswith("history:last-passed (run 7, night-7")


def test_trend_shows_the_dips_and_marks_the_graph_release(recorded: Path) -> None:
    out = history(recorded, "trend", "steps_score.mean", "--last", "4").splitlines()
    assert [line.split()[4] for line in out[2:6]] == ["1.0000", "0.6522", "1.0000", "0.7500"]
    assert out[5].endswith("<- graph, responses")
    assert out[3].endswith("<- responses")


def test_a_past_report_is_regenerated_as_it_was_written(recorded: Path) -> None:
    history(recorded, "report", "night-2", "--report", "again.json", "--html", "again.html")
    assert (recorded / "again.json").read_bytes() == (recorded / "reports" / "run-2.json").read_bytes()
    assert (recorded / "again.html").read_bytes() == (recorded / "reports" / "run-2.html").read_bytes()
