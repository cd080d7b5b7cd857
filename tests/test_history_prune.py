"""Retention: `prune` keeps the newest runs per branch or those newer than a date, gives up on shard
sets that waited too long, says what it would do in a dry run; `shards` lists and clears waiting
sets. On SQLite (whose file shrinks) and on the real PostgreSQL server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_support import run_report

from pytest_graphrag_eval.commands.history import main
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports


def record(url: str) -> None:
    """Six nights on main, three on a feature branch (run ids 1..9 in that order), one waiting shard."""
    with open_history(url) as store:
        for night in range(6):
            store.record_run(
                run_report(night, questions=300),
                run_key=f"main-{night}",
                provenance=RunProvenance("c", "main"),
            )
        for night in range(3):
            store.record_run(
                run_report(24 + night, questions=300),
                run_key=f"feature-{night}",
                provenance=RunProvenance("c", "feature"),
            )
        store.record_run(
            run_report(40, shard=(1, 2)), run_key="never-completed", merge_shards=merge_shard_reports
        )


def keys(url: str) -> list[str]:
    with open_history(url) as store:
        return sorted(run.run_key for run in store.runs())


def prune(url: str, capsys: pytest.CaptureFixture[str], *arguments: str) -> dict[str, object]:
    assert main([url, "prune", "--json", *arguments]) == 0
    result = json.loads(capsys.readouterr().out)
    assert isinstance(result, dict)
    return result


def test_prune_keeps_the_newest_runs_of_each_branch(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record(history_url)
    dry = prune(history_url, capsys, "--keep", "2", "--dry-run")
    assert dry["dry_run"] is True and dry["runs"] == [7, 4, 3, 2, 1]
    assert len(keys(history_url)) == 9  # nothing deleted
    done = prune(history_url, capsys, "--keep", "2")
    assert done["runs"] == [7, 4, 3, 2, 1] and done["waiting"] == []
    assert keys(history_url) == ["feature-1", "feature-2", "main-4", "main-5"]
    if not history_url.startswith("postgresql"):
        assert int(str(done["size_after"])) < int(str(done["size_before"]))
    with open_history(history_url) as store:  # what is left reads whole
        assert len(store.question_results("main-5")) == 300
        assert store.load_report("feature-2")["metadata"]["started_at"] == "2026-01-02T02:00:00Z"
        assert len(store.question_outcomes(last_n=10).runs) == 4
    assert main([history_url, "prune", "--keep", "2"]) == 0
    assert "deleted 0 run(s) and 0 waiting shard set(s)" in capsys.readouterr().out


def test_prune_by_date_and_by_branch(history_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    record(history_url)
    assert prune(history_url, capsys, "--newer-than", "2026-01-01T04:00:00", "--branch", "main")["runs"] == [
        4,
        3,
        2,
        1,
    ]
    assert keys(history_url) == ["feature-0", "feature-1", "feature-2", "main-4", "main-5"]
    assert prune(history_url, capsys, "--newer-than", "2026-01-02", "--keep", "1")["runs"] == [5]
    assert keys(history_url) == ["feature-0", "feature-1", "feature-2", "main-5"]


def test_waiting_shard_sets_are_listed_cleared_and_given_up(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record(history_url)
    with open_history(history_url) as store:
        store.record_run(
            run_report(41, shard=(2, 3)), run_key="also-waiting", merge_shards=merge_shard_reports
        )
    assert main([history_url, "shards"]) == 0
    out = capsys.readouterr().out
    assert "never-completed" in out and "missing shard(s) 2" in out and "missing shard(s) 1, 3" in out
    assert main([history_url, "shards", "--clear", "also-waiting", "no-such-key"]) == 0
    assert "cleared the waiting shards of run also-waiting" in capsys.readouterr().out
    assert main([history_url, "shards", "--json"]) == 0
    assert [item["run_key"] for item in json.loads(capsys.readouterr().out)] == ["never-completed"]
    assert prune(history_url, capsys, "--waiting-days", "1")["waiting"] == []  # recorded just now
    assert prune(history_url, capsys, "--waiting-days", "0", "--dry-run")["waiting"] == ["never-completed"]
    assert prune(history_url, capsys, "--waiting-days", "0")["waiting"] == ["never-completed"]
    with open_history(history_url) as store:
        assert store.waiting_shards() == [] and len(store.runs()) == 9


def test_prune_without_a_rule_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(tmp_path / "history.db")
    record(url)
    assert main([url, "prune"]) == 2
    assert "prune: say what to keep: --keep N" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # a usage error, as every option's bad value
        main([url, "prune", "--keep", "0"])
    assert refused.value.code == 2
    assert "error: --keep must be between 1 and 1000000, got 0" in capsys.readouterr().err
    assert main([url, "prune", "--newer-than", "last tuesday"]) == 2
    assert "is not a date" in capsys.readouterr().err
    assert len(keys(url)) == 9
