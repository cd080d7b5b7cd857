"""What counts as one run and one history: CI re-runs of failed shards, imports of shard reports, empty
reports, suites sharing a store, flips under changed inputs, and stored text printed on a terminal.
Each on SQLite and on the real PostgreSQL server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_support import run_report

from pytest_graphrag_eval.commands.history import main
from pytest_graphrag_eval.history.analysis import flaky_questions
from pytest_graphrag_eval.history.provenance import RunProvenance, detect_provenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports


def github(attempt: int) -> RunProvenance:
    return detect_provenance(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_SHA": "f" * 40,
            "GITHUB_REF_NAME": "main",
            "GITHUB_REPOSITORY": "team/agent",
            "GITHUB_RUN_ID": "77",
            "GITHUB_RUN_ATTEMPT": str(attempt),
        }
    )


def test_re_running_the_crashed_shard_completes_the_run(history_url: str) -> None:
    """GitHub's "Re-run failed jobs": shards 1 and 3 recorded in attempt 1, shard 2 crashed and ran
    again in attempt 2, under a new run key."""
    with open_history(history_url) as store:
        for index in (1, 3):
            first = store.record_run(
                run_report(5, shard=(index, 3)), provenance=github(1), merge_shards=merge_shard_reports
            )
            assert not first.complete
        rerun = store.record_run(
            run_report(5, shard=(2, 3), failing=["q00004"]),
            provenance=github(2),
            merge_shards=merge_shard_reports,
        )
        assert rerun.complete and rerun.run_key == "github:team/agent:77:2"
        (run,) = store.runs()
        assert (run.run_key, run.questions, run.failed) == ("github:team/agent:77:2", 12, 1)
        assert store.waiting_shards() == []


def test_three_shard_reports_imported_in_one_command_make_one_run(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for index in (1, 2, 3):
        path = tmp_path / f"shard-{index}.json"
        path.write_text(json.dumps(run_report(2, shard=(index, 3), failing=["q00002"])), encoding="utf-8")
        paths.append(str(path))
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(run_report(1)), encoding="utf-8")
    assert main([history_url, "import", *paths, str(whole)]) == 0
    out = capsys.readouterr().out
    assert out.count("imported run ") == 2 and "waiting" in out
    with open_history(history_url) as store:
        runs = store.runs()
        assert sorted((run.questions, run.failed) for run in runs) == [(12, 0), (12, 1)]
        assert store.waiting_shards() == []
    assert main([history_url, "import", *paths]) == 2  # the same run again: refused, not counted twice
    assert "is already recorded" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"results": []}, "field 'results' is empty: a report of no questions records no run"),
        ({"results": [{"question_id": "q1", "outcome": "passed"}]}, "field 'metadata.started_at' is missing"),
    ],
)
def test_an_empty_or_undated_report_is_refused(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], report: dict[str, Any], message: str
) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main([history_url, "import", str(path)]) == 2
    assert f"{path}: {message}" in capsys.readouterr().err
    with open_history(history_url) as store:
        assert store.runs() == []


def suite_report(number: int, corpus: str, failing: list[str]) -> dict[str, Any]:
    report = run_report(number, failing=failing, corpus=f"sha256:{corpus}")
    report["metadata"]["corpus"] = [corpus]
    return report


def test_two_suites_in_one_history_never_mix(history_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Suite A is steady; suite B, same question ids, fails q00001..q00003 on the nights between."""
    with open_history(history_url) as store:
        for night in range(6):
            store.record_run(
                suite_report(2 * night, "suite-a.yaml", []), provenance=RunProvenance("c", "main")
            )
            store.record_run(
                suite_report(
                    2 * night + 1, "suite-b.yaml", ["q00001", "q00002", "q00003"] if night % 2 else []
                ),
                provenance=RunProvenance("c", "main"),
            )
        a = store.question_outcomes(last_n=10, suite="suite-a.yaml")
        assert flaky_questions(a) == [] and {run.run_id for run in a.runs} == {1, 3, 5, 7, 9, 11}
        b = store.question_outcomes(last_n=10, suite="suite-b.yaml")
        assert [item.question_id for item in flaky_questions(b)] == ["q00001", "q00002", "q00003"]
        assert store.resolve("last").suite == "suite-b.yaml"
        assert store.resolve("last", suite="suite-a.yaml").run_id == 11
        assert store.resolve("last-passed", suite="suite-a.yaml").suite == "suite-a.yaml"
        series = store.metric_series("pass_rate", last_n=20, suite="suite-a.yaml")
        assert [point.value for point in series] == [1.0] * 6
    # the commands take the newest run's suite unless told
    assert main([history_url, "flaky", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["suite"] == "suite-b.yaml"
    assert main([history_url, "flaky", "--json", "--suite", "suite-a.yaml"]) == 0
    assert json.loads(capsys.readouterr().out)["flaky"] == []
    assert main([history_url, "trend", "pass_rate", "--suite", "suite-a.yaml"]) == 0
    assert "(suite suite-a.yaml)" in capsys.readouterr().out


def test_a_flip_that_came_with_other_responses_is_not_flaky(history_url: str) -> None:
    """Good and broken recordings alternated twice: the broken one's failures are regressions, never noise;
    a live agent that flips on the same inputs is flaky."""

    def night(number: int, responses: str, failing: list[str]) -> dict[str, Any]:
        report = run_report(number, failing=failing)
        report["metadata"]["responses"] = responses
        for result in report["results"]:
            if responses != "live":
                result["actual_answer"] = f"{result.get('actual_answer')} ({responses})"
        return report

    with open_history(history_url) as store:
        for number in range(8):
            broken = number % 4 == 1
            store.record_run(
                night(
                    number, "regression.jsonl" if broken else "responses.jsonl", ["q00003"] if broken else []
                ),
                provenance=RunProvenance("c", "main"),
            )
        assert flaky_questions(store.question_outcomes(last_n=8), min_flips=1) == []
        for number in range(8, 12):
            store.record_run(
                night(number, "live", ["q00005"] if number % 2 else []), provenance=RunProvenance("d")
            )
        found = flaky_questions(store.question_outcomes(last_n=4), min_flips=2)
        assert [(item.question_id, item.flips) for item in found] == [("q00005", 3)]


def test_ci_text_is_made_safe_for_a_terminal(history_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "main\x1b]0;pwned\x07\x1b[2J\nforged line\u202e"
    with open_history(history_url) as store:
        for number in range(3):
            store.record_run(
                run_report(number, failing=["q00001"] if number == 1 else []),
                run_key=f"key\x1b[31m{number}",
                provenance=RunProvenance(commit="c\x1b[8m", branch=hostile, ci_url="https://ci/\x9b2J"),
            )
    for arguments in (
        ["list"],
        ["show", "last"],
        ["trend", "steps_score.mean"],
        ["flaky", "--min-flips", "1"],
    ):
        for json_flag in ([], ["--json"]):
            assert main([history_url, *arguments, *json_flag]) == 0
            out = capsys.readouterr().out
            assert not any(character in out for character in "\x1b\x07\x9b\u202e"), (arguments, out)
            if not json_flag:
                assert all(not line.startswith("forged line") for line in out.splitlines())
    main([history_url, "show", "last"])
    assert "main\\x1b]0;pwned\\x07\\x1b[2J\\nforged line\\u202e" in capsys.readouterr().out
