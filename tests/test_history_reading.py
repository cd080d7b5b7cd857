"""What a run reads from its history, from an SQLite file and from a real PostgreSQL server alike.

Runs are recorded through the store's own `record_run`; the run then reads them back with
`run.run_history` as the plugin does: the earlier runs of its branch, a baseline by reference, and
a store it cannot read turned into a warning (or, for a baseline, a usage error).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from history_support import run_report

from pytest_graphrag_eval.compare.past_runs import flaky_questions
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.history.analysis import flaky_questions as stored_flaky
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.run_history import read_history

ON_MAIN = {"GITHUB_SHA": "c9", "GITHUB_REF_NAME": "main"}


def record_nights(url: str) -> list[str]:
    """Five runs: q-flip fails every other night on main; one night on a feature branch; the graph
    changes before the fourth night on main. Returns the question ids of one report."""
    nights = [
        ("main", (), "g1"),
        ("main", ("q00001",), "g1"),
        ("feature", ("q00001", "q00002"), "g1"),
        ("main", (), "g2"),
        ("main", ("q00001",), "g2"),
    ]
    with open_history(url) as store:
        for number, (branch, failing, graph) in enumerate(nights, start=1):
            report = run_report(number, failing=failing, graph=graph)
            store.record_run(
                report, run_key=f"night-{number}", provenance=RunProvenance(f"c{number}", branch)
            )
    return [result["question_id"] for result in run_report(0)["results"]]


def test_a_run_reads_its_branchs_earlier_runs_and_a_baseline(history_url: str) -> None:
    questions = record_nights(history_url)
    assert "q00001" in questions
    found = read_history(
        history_url, environ=ON_MAIN, cwd=None, window=4, flaky_runs=4, flaky_flips=2, baseline_ref="feature"
    )
    assert found.warning is None and found.runs is not None
    runs = found.runs.runs
    assert [run.run_id for run in runs] == ["2", "4", "5"]  # main's newest three, oldest first
    assert [run.outcomes["q00001"] for run in runs] == ["failed", "passed", "failed"]
    assert [run.identities["graph"] == runs[0].identities["graph"] for run in runs] == [True, False, False]
    assert [run.passed for run in runs] == [False, True, False]
    assert found.provenance.branch == "main" and found.provenance.commit == "c9"
    assert found.baseline is not None and found.baseline_name is not None
    assert found.baseline_name.startswith("history:feature (run 3, night-3, started ")
    failed = sorted(r["question_id"] for r in found.baseline["results"] if r["outcome"] == "failed")
    assert failed == ["q00001", "q00002"]
    current = [{"question_id": question, "outcome": "passed"} for question in questions]
    # flips count between runs on the same inputs: 4 -> 5 on graph g2, and 5 -> this run on g2 too;
    # 2 -> 4 came with the new graph
    assert [entry.question_id for entry in flaky_questions(found.runs, current, "c9", runs[-1].inputs)] == [
        "q00001"
    ]
    assert flaky_questions(found.runs, current, "c9", "other inputs") == []


def test_a_new_branch_reads_every_run(history_url: str) -> None:
    record_nights(history_url)
    found = read_history(
        history_url,
        environ={"GITHUB_SHA": "c9", "GITHUB_REF_NAME": "new-branch"},
        cwd=None,
        window=10,
        flaky_runs=10,
        flaky_flips=2,
    )
    assert found.runs is not None and [run.run_id for run in found.runs.runs] == ["1", "2", "3", "4", "5"]


def test_an_unreadable_history_is_a_warning_and_a_baseline_from_it_a_usage_error(tmp_path: Path) -> None:
    broken = tmp_path / "history.sqlite"
    broken.write_bytes(b"this is not an SQLite database, not even its header" * 100)
    found = read_history(str(broken), environ=ON_MAIN, cwd=None, window=10, flaky_runs=10, flaky_flips=2)
    assert found.runs is None
    assert found.warning is not None and "the run history could not be read" in found.warning
    assert str(broken) in found.warning
    with pytest.raises(ConfigurationError, match=r"--graphrag-baseline history:last: .*history"):
        read_history(
            str(broken),
            environ=ON_MAIN,
            cwd=None,
            window=1,
            flaky_runs=10,
            flaky_flips=2,
            baseline_ref="last",
        )


def test_the_run_and_the_history_command_call_the_same_questions_flaky(history_url: str) -> None:
    """Passing and failing on one commit is flaky only with the same inputs, in the run's own
    history section as in `graphrag-eval-history flaky`: a replay of another recording is
    another input, not noise."""

    def replay(number: int, responses: str, failing: list[str]) -> dict:
        report = run_report(number, failing=failing)
        report["metadata"]["responses"] = responses
        for result in report["results"]:  # each recording answers its own way
            result["actual_answer"] = f"{result.get('actual_answer')} ({responses})"
        return report

    same_commit = RunProvenance(commit="c9", branch="main")
    with open_history(history_url) as store:
        store.record_run(replay(0, "recordings/responses.jsonl", []), provenance=same_commit)
        store.record_run(replay(1, "recordings/regression.jsonl", ["q00002"]), provenance=same_commit)
    # q00002 failed only with the other recording; q00003 passed and now fails with the same one
    current = replay(2, "recordings/responses.jsonl", ["q00003"])
    found = read_history(history_url, environ=ON_MAIN, cwd=None, window=5, flaky_runs=5, flaky_flips=3)
    assert found.runs is not None
    this_run = found.current_run(current["metadata"], current["results"])
    in_run = flaky_questions(found.runs, current["results"], this_run.commit, this_run.inputs)
    with open_history(history_url) as store:
        store.record_run(current, provenance=same_commit)
        by_command = stored_flaky(store.question_outcomes(last_n=3), min_flips=3)
    assert [entry.question_id for entry in in_run] == ["q00003"]
    assert [entry.question_id for entry in by_command] == ["q00003"]
