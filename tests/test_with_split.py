"""pytest-split beside the plugin (issue 44): a group is a shard, whose report says it is partial and
leaves its gates to graphrag-eval-merge; the merged groups are whole again."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, load_json, replay_project

from pytest_graphrag_eval.commands.merge import merge_main


def test_split_groups_are_partial_and_merge_into_a_whole_run(pytester: pytest.Pytester) -> None:
    replay_project(pytester)
    gate = ["--graphrag-gate", "steps_score.mean>=0.9"]
    for group in (1, 2):
        result = pytester.runpytest_subprocess(
            *REPLAY,
            *STRICT,
            *gate,
            "--splits",
            "2",
            "--group",
            str(group),
            f"--graphrag-report=g{group}.json",
        )
        assert result.ret == pytest.ExitCode.OK
        result.stdout.fnmatch_lines(
            ["*partial run: * of 3 corpus questions judged*", "*shard*graphrag-eval-merge*"]
        )
        assert "gates were decided" not in result.stdout.str()  # a shard's gates are the merge's
        partial = load_json(pytester.path / f"g{group}.json")["metadata"]["partial"]
        assert partial["corpus_questions"] == 3 and partial["judged_questions"] < 3
    assert merge_main([str(pytester.path / "g1.json"), str(pytester.path / "g2.json"), "--report",
                       str(pytester.path / "merged.json")]) == 0  # fmt: skip
    merged = load_json(pytester.path / "merged.json")
    assert len(merged["results"]) == 3 and "partial" not in merged["metadata"]
    assert [gate["passed"] for gate in merged["gates"]] == [True]
