"""The history store on SQLite and on a real PostgreSQL server: recording, reading, shards, run keys."""

from __future__ import annotations

import pytest
from history_support import run_report

from pytest_graphrag_eval.errors import HistoryError
from pytest_graphrag_eval.history.analysis import flaky_questions, trend
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.records import OUTCOME_NAMES
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports


def test_a_recorded_run_reads_back_with_its_report_verdict_and_provenance(history_url: str) -> None:
    report = run_report(0, failing=["q00003"])
    with open_history(history_url) as store:
        recorded = store.record_run(
            report, run_key="ci-1", provenance=RunProvenance(commit="abc123", branch="main", ci="github")
        )
        assert recorded.complete
        (run,) = store.runs()
        assert (run.run_id, run.run_key, run.commit, run.branch, run.ci) == (
            recorded.run_id,
            "ci-1",
            "abc123",
            "main",
            "github",
        )
        assert (run.questions, run.failed, run.passed) == (12, 1, False)
        assert run.failure_reason == "1 question(s) failed"
        assert run.started_at == "2026-01-01T00:00:00Z"
        assert store.load_report("ci-1") == report
        assert store.load_report("last") == report
        questions = store.question_results("last")
        assert [q.question_id for q in questions] == [r["question_id"] for r in report["results"]]
        failed = next(q for q in questions if q.question_id == "q00003")
        assert (failed.outcome, failed.passed, failed.failure) == (
            "failed",
            False,
            "steps_score = 0, required >= 1",
        )
        assert failed.scores["steps_score"] == 0.0
        assert failed.scores["answer_f1"] == report["results"][3]["answer_f1"]  # partial credit kept


def test_runs_are_newest_first_filtered_by_branch_and_resolved_by_name(history_url: str) -> None:
    with open_history(history_url) as store:
        store.record_run(run_report(2), run_key="b", provenance=RunProvenance(branch="main"))
        store.record_run(
            run_report(1, failing=["q00001"]), run_key="a", provenance=RunProvenance(branch="main")
        )
        store.record_run(
            run_report(3, failing=["q00002"]), run_key="c", provenance=RunProvenance(branch="feature")
        )
        assert [run.run_key for run in store.runs()] == ["c", "b", "a"]
        assert [run.run_key for run in store.runs(branch="main")] == ["b", "a"]
        assert [run.run_key for run in store.runs(limit=1)] == ["c"]
        assert store.resolve("last").run_key == "c"
        assert store.resolve("last-passed").run_key == "b"
        assert store.resolve("main").run_key == "b"
        assert store.resolve(str(store.resolve("a").run_id)).run_key == "a"
        assert store.resolve(f"#{store.resolve('a').run_id}").run_key == "a"
        with pytest.raises(HistoryError, match="no run 'nope'"):
            store.resolve("nope")


def test_outcomes_and_metric_series_follow_the_runs_oldest_first(history_url: str) -> None:
    failing = [["q00001"], [], ["q00001"], [], ["q00001", "q00005"]]
    with open_history(history_url) as store:
        for number, ids in enumerate(failing):
            store.record_run(
                run_report(number, failing=ids), provenance=RunProvenance(commit=f"c{number // 2}")
            )
        history = store.question_outcomes(last_n=10)
        assert history.strips["q00001"] == "FPFPF"
        assert history.strips["q00005"] == "PPPPF"
        assert history.strips["q00000"] == "PPPPP"
        assert [OUTCOME_NAMES[code] for code in history.strips["q00001"]] == [
            "failed",
            "passed",
            "failed",
            "passed",
            "failed",
        ]
        flaky = flaky_questions(history, min_flips=3)
        assert [(item.question_id, item.flips) for item in flaky] == [("q00001", 4)]
        assert flaky[0].mixed_commits == ("c0", "c1")  # passed and failed on one commit
        assert store.question_outcomes(last_n=2).strips["q00001"] == "PF"
        series = store.metric_series("steps_score.mean", last_n=10)
        assert [point.value for point in series] == pytest.approx([11 / 12, 1, 11 / 12, 1, 10 / 12])
        assert trend(series).slope == pytest.approx(-1 / 60)
        assert [p.value for p in store.metric_series("pass_rate", last_n=3)] == pytest.approx(
            [11 / 12, 1, 10 / 12]
        )


def test_a_changed_corpus_or_graph_is_marked_in_the_trend(history_url: str) -> None:
    with open_history(history_url) as store:
        store.record_run(run_report(0, graph="g1"))
        store.record_run(run_report(1, graph="g1"))
        store.record_run(run_report(2, graph="g2"))
        store.record_run(run_report(3, graph="g2", corpus="sha256:bbb"))
        result = trend(store.metric_series("steps_score", last_n=10))
        assert [(change.index, change.what) for change in result.changes] == [
            (2, ("graph",)),
            (3, ("corpus",)),
        ]


def test_questions_added_between_runs_are_absent_before(history_url: str) -> None:
    with open_history(history_url) as store:
        store.record_run(run_report(0, questions=4))
        store.record_run(run_report(1, questions=6, failing=["q00005"]))
        strips = store.question_outcomes(last_n=5).strips
        assert strips["q00005"] == "-F"
        assert strips["q00000"] == "PP"


def test_shards_under_one_run_key_make_one_run(history_url: str) -> None:
    whole = run_report(0, failing=["q00004"])
    with open_history(history_url) as store:
        first = store.record_run(
            run_report(0, failing=["q00004"], shard=(2, 3)),
            run_key="pipeline-9",
            merge_shards=merge_shard_reports,
        )
        assert (first.complete, first.shards_recorded, first.shards_expected) == (False, 1, 3)
        assert store.runs() == []  # a run is listed once all of its shards are in
        assert [(item.run_key, item.indexes, item.expected) for item in store.waiting_shards()] == [
            ("pipeline-9", (2,), 3)
        ]
        store.record_run(
            run_report(0, failing=["q00004"], shard=(1, 3)),
            run_key="pipeline-9",
            merge_shards=merge_shard_reports,
        )
        last = store.record_run(
            run_report(0, failing=["q00004"], shard=(3, 3)),
            run_key="pipeline-9",
            merge_shards=merge_shard_reports,
        )
        assert last.complete
        assert store.waiting_shards() == []
        (run,) = store.runs()
        assert (run.run_key, run.questions, run.failed) == ("pipeline-9", 12, 1)
        merged = store.load_report("pipeline-9")
        assert [r["question_id"] for r in merged["results"]] == [r["question_id"] for r in whole["results"]]
        assert "shard" not in merged["metadata"]


def test_a_shard_takes_its_run_key_from_the_ci(history_url: str) -> None:
    ci = RunProvenance(commit="abc", branch="main", ci="github", ci_run_key="github:o/r:77:1")
    with open_history(history_url) as store:
        store.record_run(run_report(0, shard=(1, 2)), provenance=ci, merge_shards=merge_shard_reports)
        store.record_run(run_report(0, shard=(2, 2)), provenance=ci, merge_shards=merge_shard_reports)
        assert [run.run_key for run in store.runs()] == ["github:o/r:77:1"]
        with pytest.raises(HistoryError, match=r"shard 1/2: give every shard the same run key"):
            store.record_run(run_report(0, shard=(1, 2)), merge_shards=merge_shard_reports)


def test_a_run_key_that_exists_is_refused_and_the_stored_run_kept(history_url: str) -> None:
    with open_history(history_url) as store:
        store.record_run(run_report(0), run_key="nightly-1")
        with pytest.raises(HistoryError, match=r"run key 'nightly-1' is already recorded \(run 1"):
            store.record_run(run_report(1, failing=["q00001"]), run_key="nightly-1")
        store.record_run(run_report(0, shard=(1, 2)), run_key="sharded", merge_shards=merge_shard_reports)
        with pytest.raises(HistoryError, match=r"run key 'sharded': shard 1/2 is already recorded"):
            store.record_run(run_report(0, shard=(1, 2)), run_key="sharded", merge_shards=merge_shard_reports)
        with pytest.raises(HistoryError, match=r"run key 'nightly-1' is already recorded"):
            store.record_run(
                run_report(0, shard=(1, 2)), run_key="nightly-1", merge_shards=merge_shard_reports
            )
        (run,) = store.runs()
        assert (run.run_key, run.failed) == ("nightly-1", 0)


def test_a_report_that_is_not_one_is_refused_naming_the_source(history_url: str) -> None:
    with open_history(history_url) as store:
        with pytest.raises(HistoryError, match=r"old\.json: not a pytest-graphrag-eval JSON report"):
            store.record_run({"rows": []}, source="old.json")
        report = run_report(0)
        del report["results"][2]["outcome"]
        with pytest.raises(
            HistoryError, match=r"x\.json: results\[2\] \(question 'q00002'\): field 'outcome'"
        ):
            store.record_run(report, source="x.json")
        assert store.runs() == []


def test_passing_and_failing_on_one_commit_counts_only_with_the_same_inputs(history_url: str) -> None:
    def replay(number: int, responses: str, failing: list[str]) -> dict:
        report = run_report(number, failing=failing)
        report["metadata"]["responses"] = responses
        for result in report["results"]:  # each recording answers its own way
            result["actual_answer"] = f"{result.get('actual_answer')} ({responses})"
        return report

    same = RunProvenance(commit="abc")
    with open_history(history_url) as store:
        store.record_run(replay(0, "recordings/responses.jsonl", []), provenance=same)
        store.record_run(replay(1, "recordings/regression.jsonl", ["q00002"]), provenance=same)
        history = store.question_outcomes(last_n=5)
        assert flaky_questions(history, min_flips=2) == []  # another recording is another input
        store.record_run(replay(2, "recordings/responses.jsonl", ["q00004"]), provenance=same)
        flaky = flaky_questions(store.question_outcomes(last_n=5), min_flips=3)
        assert [(item.question_id, item.mixed_commits) for item in flaky] == [("q00004", ("abc",))]


def test_a_run_summary_says_what_inputs_it_ran_on(history_url: str) -> None:
    with open_history(history_url) as store:
        for number, graph in enumerate(["g1", "g1", "g2"]):
            store.record_run(run_report(number, graph=graph))
        newest, middle, oldest = store.runs()
        assert oldest.inputs == middle.inputs != newest.inputs
        assert [run.inputs for run in store.question_outcomes(last_n=3).runs] == [
            oldest.inputs,
            middle.inputs,
            newest.inputs,
        ]
