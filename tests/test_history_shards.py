"""A sharded run is recorded once: by graphrag-eval-merge --history, or by each shard under one run key."""

from __future__ import annotations

import json

import pytest
from plugin_support import REPLAY_WITH_THRESHOLD, write_project_where_q3_fails

from pytest_graphrag_eval.commands.merge import merge_main
from pytest_graphrag_eval.history.store import open_history

REPLAY = REPLAY_WITH_THRESHOLD


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    return write_project_where_q3_fails(pytester)


def test_the_merge_records_the_merged_run_once(
    project: pytest.Pytester, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    for shard in (1, 2):
        project.runpytest(
            *REPLAY, "--graphrag-shard", f"{shard}/2", "--graphrag-report", f"shard-{shard}.json"
        )
    url = str(tmp_path / "history.db")
    shards = [str(project.path / f"shard-{shard}.json") for shard in (1, 2)]
    status = merge_main([*shards, "--report", str(tmp_path / "merged.json"), "--history", url])
    out = capsys.readouterr().out
    assert status == 1  # q3 failed
    assert "graphrag-eval-merge: history: recorded run 1" in out
    with open_history(url) as store:
        (run,) = store.runs()
        assert (run.questions, run.failed) == (3, 1)
        assert store.load_report("last") == json.loads((tmp_path / "merged.json").read_text())


def test_each_shard_records_itself_under_one_run_key(project: pytest.Pytester, history_url: str) -> None:
    first = project.runpytest(
        *REPLAY,
        "--graphrag-shard",
        "2/2",
        f"--graphrag-history={history_url}",
        "--graphrag-history-run-key=ci-7",
    )
    first.stdout.fnmatch_lines(
        ["*history: shard 1 of 2 of run ci-7 recorded in *; the run is listed once every*"]
    )
    with open_history(history_url) as store:
        assert store.runs() == []
    second = project.runpytest(
        *REPLAY,
        "--graphrag-shard",
        "1/2",
        f"--graphrag-history={history_url}",
        "--graphrag-history-run-key=ci-7",
    )
    second.stdout.fnmatch_lines(["*history: recorded run 1 (ci-7) in *"])
    with open_history(history_url) as store:
        (run,) = store.runs()
        assert (run.run_key, run.questions, run.failed) == ("ci-7", 3, 1)
        assert store.question_outcomes(last_n=1).strips == {"q1": "P", "q2": "P", "q3": "F"}


def test_a_shard_without_a_run_key_is_not_recorded_and_says_how(project: pytest.Pytester, tmp_path) -> None:
    result = project.runpytest(*REPLAY, "--graphrag-shard", "1/2", f"--graphrag-history={tmp_path / 'h.db'}")
    result.stdout.fnmatch_lines(
        ["*NOT recorded in the history: the run's report is shard 1/2: give every shard the same run key*"]
    )
