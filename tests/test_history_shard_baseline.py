"""Shards compared with a run of the history, recorded by the store under one run key."""

from __future__ import annotations

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

from pytest_graphrag_eval.history.store import open_history

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]


def test_self_recording_shards_with_a_history_baseline_are_recorded_and_say_what_is_missing(
    pytester: pytest.Pytester, history_url: str
) -> None:
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[2] = response("q3", rows=[["s4", "Delta"]])  # q3 fails
    write_responses(pytester, responses)
    pytester.runpytest(*REPLAY, f"--graphrag-history={history_url}")  # run 1: the baseline
    for shard in ("2/2", "1/2"):
        result = pytester.runpytest(
            *REPLAY,
            "--graphrag-shard",
            shard,
            f"--graphrag-history={history_url}",
            "--graphrag-history-run-key=ci-8",
            "--graphrag-baseline=history:last",
        )
    result.stdout.fnmatch_lines(["*history: recorded run 2 (ci-8) in *"])
    with open_history(history_url) as store:
        report = store.load_report("ci-8")
    assert "comparison" not in report
    assert any(
        "compared with history:last, which this merge did not read" in text for text in report["warnings"]
    )
