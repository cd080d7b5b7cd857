"""graphrag-eval-merge ends a run through the plugin's end-of-run code (`run.end_of_run.conclude_run`):
gates, the history record and whether the run failed are decided in one place, so a merged run fails
where the unsharded run would (issue 28)."""

from __future__ import annotations

import json
import textwrap

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.commands.merge import merge_main

pytest_plugins = ["pytester"]

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl", "-p", "no:randomly"]
# Ctrl-C once the shard's last question has been scored and reported: the shard's report holds all
# its questions, and says the run was interrupted.
CTRL_C_AFTER_THE_LAST_ITEM = textwrap.dedent(
    """
    def pytest_runtest_teardown(item, nextitem):
        if nextitem is None:
            raise KeyboardInterrupt
    """
)


def test_a_merge_with_an_interrupted_shard_fails_as_the_interrupted_run_does(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())  # every question passes
    second = pytester.runpytest_subprocess(
        *REPLAY, "--graphrag-shard", "2/2", "--graphrag-report", "shard-2.json"
    )
    assert second.ret == pytest.ExitCode.OK
    pytester.makeconftest(CTRL_C_AFTER_THE_LAST_ITEM)
    first = pytester.runpytest_subprocess(
        *REPLAY, "--graphrag-shard", "1/2", "--graphrag-report", "shard-1.json"
    )
    assert first.ret == pytest.ExitCode.INTERRUPTED  # the plugin: an interrupted run is not green
    shard = json.loads((pytester.path / "shard-1.json").read_text(encoding="utf-8"))
    assert shard["metadata"]["interrupted"] is True
    reports = [str(pytester.path / name) for name in ("shard-1.json", "shard-2.json")]

    status = merge_main([*reports, "--report", str(pytester.path / "merged.json")])

    out = capsys.readouterr().out
    assert status == 1, out
    assert f"the run is incomplete: {reports[0]} was interrupted" in out
    merged = json.loads((pytester.path / "merged.json").read_text(encoding="utf-8"))
    assert merged["metadata"]["interrupted"] is True and len(merged["results"]) == 3


def test_a_merge_of_complete_shards_that_passed_exits_0(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    for index in (1, 2):
        pytester.runpytest_subprocess(
            *REPLAY, "--graphrag-shard", f"{index}/2", "--graphrag-report", f"s{index}.json"
        )
    reports = [str(pytester.path / f"s{index}.json") for index in (1, 2)]
    assert merge_main([*reports, "--report", str(pytester.path / "merged.json")]) == 0
    assert "incomplete" not in capsys.readouterr().out


def shards_compared_with_a_baseline(pytester: pytest.Pytester) -> list[str]:
    """`baseline.json`, and the reports of two shards compared with it (`s1.json`, `s2.json`)."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.runpytest_subprocess(*REPLAY, "--graphrag-report", "baseline.json")
    for index in (1, 2):
        pytester.runpytest_subprocess(
            *REPLAY, "--graphrag-baseline", "baseline.json", "--graphrag-shard", f"{index}/2",
            "--graphrag-report", f"s{index}.json",
        )  # fmt: skip
    return [str(pytester.path / f"s{index}.json") for index in (1, 2)]


def test_a_merge_compares_with_the_very_baseline_bytes_the_shards_recorded(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline is read once: the bytes whose hash matches the shards' record are the bytes compared."""
    reports = shards_compared_with_a_baseline(pytester)
    merged = pytester.path / "merged.json"
    baseline = pytester.path / "baseline.json"
    original = baseline.read_bytes()

    assert merge_main([*reports, "--report", str(merged)]) == 0
    assert json.loads(merged.read_text(encoding="utf-8"))["comparison"]["baseline"]["questions"] == 3

    baseline.write_bytes(original.replace(b'"passed"', b'"failed"', 1))  # same size, other content
    assert merge_main([*reports, "--report", str(merged)]) == 2
    assert "is missing or changed; pass that file with --baseline" in capsys.readouterr().err
    baseline.unlink()
    assert merge_main([*reports, "--report", str(merged)]) == 2
    assert "is missing or changed" in capsys.readouterr().err
    other = pytester.path / "other.json"
    other.write_bytes(original + b" ")
    assert merge_main([*reports, "--report", str(merged), "--baseline", str(other)]) == 2
    assert f"but {other} is not that file" in capsys.readouterr().err
    other.write_bytes(original)
    assert merge_main([*reports, "--report", str(merged), "--baseline", str(other)]) == 0


def test_a_baseline_that_is_not_json_is_refused_by_name(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shards without a baseline, given one with `--baseline` that does not parse: exit 2, naming it."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    for index in (1, 2):
        pytester.runpytest_subprocess(
            *REPLAY, "--graphrag-shard", f"{index}/2", "--graphrag-report", f"plain{index}.json"
        )
    broken = pytester.path / "broken.json"
    broken.write_text('{"format_version": 2, "results": [', encoding="utf-8")
    plain = [str(pytester.path / f"plain{index}.json") for index in (1, 2)]
    merged = pytester.path / "merged.json"
    assert merge_main([*plain, "--report", str(merged), "--baseline", str(broken)]) == 2
    error = capsys.readouterr().err
    assert "broken.json" in error and "not JSON" in error
    assert not merged.exists() and sorted(path.name for path in pytester.path.glob(".*.tmp")) == []
