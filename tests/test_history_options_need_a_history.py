"""The options that only a history can honour (`--graphrag-history-required`, a run key) given without a
history stop the run before its first question, in the plugin and in `graphrag-eval-merge`: a run that
was required to be recorded is never green without a record (issue 43)."""

from __future__ import annotations

import pytest
from plugin_support import REPLAY_WITH_THRESHOLD, write_project_where_q3_fails

from pytest_graphrag_eval.commands.merge import merge_main


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--graphrag-history-required"], "--graphrag-history-required"),
        (["--graphrag-history-run-key", "nightly"], "--graphrag-history-run-key"),
    ],
)
def test_the_plugin_refuses_a_history_option_without_a_history(
    pytester: pytest.Pytester, given: list[str], named: str
) -> None:
    write_project_where_q3_fails(pytester)
    result = pytester.runpytest(*REPLAY_WITH_THRESHOLD, *given, "--graphrag-report=report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: {named}*needs a history to record the run in: pass --graphrag-history URL"]
    )
    assert not (pytester.path / "report.json").exists()


def test_an_ini_history_option_without_a_history_is_refused(pytester: pytest.Pytester) -> None:
    write_project_where_q3_fails(pytester)
    pytester.makeini("[pytest]\ngraphrag_history_required = true\n")
    result = pytester.runpytest(*REPLAY_WITH_THRESHOLD)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --graphrag-history-required*needs a history*"])


@pytest.mark.parametrize("given", [["--history-required"], ["--history-run-key", "nightly"]])
def test_the_merge_refuses_a_history_option_without_a_history(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], given: list[str]
) -> None:
    write_project_where_q3_fails(pytester)
    for shard in (1, 2):
        pytester.runpytest(
            *REPLAY_WITH_THRESHOLD, "--graphrag-shard", f"{shard}/2", "--graphrag-report", f"s{shard}.json"
        )
    shards = [str(pytester.path / f"s{shard}.json") for shard in (1, 2)]
    capsys.readouterr()
    assert merge_main([*shards, "--report", str(pytester.path / "merged.json"), *given]) == 2
    assert f"{given[0]} needs a history to record the run in: pass --history URL" in capsys.readouterr().err
    assert not (pytester.path / "merged.json").exists()
