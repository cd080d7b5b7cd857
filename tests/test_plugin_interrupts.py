"""Ctrl-C keeps what was scored: a Ctrl-C while the outputs are written lets them be written first,
and an interrupted reference update says that it is incomplete (issue 30). Both run pytest in a
subprocess, which sends itself the interrupt."""

from __future__ import annotations

import json
import textwrap

import pytest
from graph_support import RELEASE_1, RELEASE_2, outputs_on, small_corpus, small_responses, write_project
from plugin_support import corpus, good_responses, write_corpus, write_responses

pytest_plugins = ["pytester"]

CTRL_C_WHILE_WRITING = textwrap.dedent(
    """
    import os
    import signal

    import pytest_graphrag_eval.run.pipeline as pipeline

    # Ctrl-C as at a terminal, though this run's parent may have been started with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _build_document = pipeline.build_document


    def build_document(*args, **kwargs):  # Ctrl-C arrives as the end of the run builds the report
        os.kill(os.getpid(), signal.SIGINT)
        return _build_document(*args, **kwargs)


    pipeline.build_document = build_document
    """
)


def test_ctrl_c_after_the_last_item_still_writes_the_report(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(CTRL_C_WHILE_WRITING)
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-report", "report.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "KeyboardInterrupt" not in result.stderr.str()
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert len(report["results"]) == 3
    result.stdout.fnmatch_lines(["*interrupted; the outputs were written first*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_ctrl_c_during_a_reference_update_says_it_is_incomplete(pytester: pytest.Pytester) -> None:
    old = outputs_on(RELEASE_1)
    write_project(pytester, small_corpus(old), small_responses(old), {"release2.ttl": RELEASE_2})
    pytester.makeconftest(
        """
        def pytest_runtest_teardown(item):
            if item.name == "in-zone-1":
                raise KeyboardInterrupt
        """
    )
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-sparql-endpoint", "release2.ttl", "--graphrag-update-references",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "*updated corpus.yaml: in-zone-1*",
            "*the run was interrupted, so the update is incomplete: 1 output(s) updated from the 1 "
            "question(s) that finished; 2 question(s) did not run and keep their old outputs*",
        ]
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
