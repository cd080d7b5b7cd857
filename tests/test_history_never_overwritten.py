"""A history file is never written over by a report: the plugin's outputs, `graphrag-eval-merge`'s and
`graphrag-eval-history report`'s naming the SQLite history are refused before anything is written, and
the history's runs are all still there (issue 43: nothing changes a file before it is known to be a
history)."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_support import REPLAY_WITH_THRESHOLD, write_project_where_q3_fails

from pytest_graphrag_eval.commands.history import main as history_main
from pytest_graphrag_eval.commands.merge import merge_main
from pytest_graphrag_eval.history.store import open_history


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    project = write_project_where_q3_fails(pytester)
    project.runpytest(*REPLAY_WITH_THRESHOLD, "--graphrag-history=h.db")
    return project


def _runs(history: Path) -> int:
    with open_history(str(history)) as store:
        return len(store.runs())


@pytest.mark.parametrize(
    "output", ["--graphrag-report", "--graphrag-markdown", "--graphrag-html", "--graphrag-review-queue"]
)
def test_a_run_refuses_an_output_on_its_history(project: pytest.Pytester, output: str) -> None:
    result = project.runpytest(
        *REPLAY_WITH_THRESHOLD, "--graphrag-history=sqlite:///h.db", f"{output}={project.path / 'h.db'}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: {output} (ini *) and --graphrag-history (ini *) name one file, *h.db: give each*"]
    )
    assert _runs(project.path / "h.db") == 1


def test_history_report_refuses_to_write_over_the_history(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    history = str(project.path / "h.db")
    assert history_main([history, "report", "last", "--markdown", history]) == 2
    assert "--markdown " in capsys.readouterr().err
    assert _runs(project.path / "h.db") == 1


def test_the_merge_refuses_to_write_over_the_history_or_a_shard(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    for shard in (1, 2):
        project.runpytest(
            *REPLAY_WITH_THRESHOLD, "--graphrag-shard", f"{shard}/2", "--graphrag-report", f"s{shard}.json"
        )
    shards = [str(project.path / f"s{shard}.json") for shard in (1, 2)]
    history = str(project.path / "h.db")
    assert merge_main([*shards, "--report", history, "--history", history]) == 2
    assert "--report " in capsys.readouterr().err
    assert _runs(project.path / "h.db") == 1
    shard_text = Path(shards[1]).read_text(encoding="utf-8")
    assert merge_main([*shards, "--html", shards[1]]) == 2
    assert Path(shards[1]).read_text(encoding="utf-8") == shard_text
