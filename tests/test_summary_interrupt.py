"""Ctrl-C while the terminal summary is printed ends with pytest's note and exit status 2, not a
traceback (issue 42); the reports, written before the summary, are whole."""

from __future__ import annotations

import json

import pytest
from plugin_support import corpus as plugin_corpus
from plugin_support import good_responses, write_corpus, write_responses

pytest_plugins = ["pytester"]

# Both interrupt the summary before our own part of it is printed (tryfirst): one raises, the other
# is a real SIGINT, whose disposition the child sets itself (a suite started from a non-interactive
# background shell hands its children SIGINT ignored).
INTERRUPTS = {
    "raised": "raise KeyboardInterrupt",
    "signal": "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "    signal.raise_signal(signal.SIGINT)",
}


@pytest.mark.parametrize("how", sorted(INTERRUPTS))
def test_ctrl_c_during_the_terminal_summary_ends_with_pytests_note(
    pytester: pytest.Pytester, how: str
) -> None:
    write_corpus(pytester, plugin_corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        f"""
import signal

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    {INTERRUPTS[how]}
"""
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--graphrag-corpus", "corpus.yaml",
        "--graphrag-responses", "responses.jsonl", "--graphrag-report", "report.json",
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output
    result.stdout.fnmatch_lines(["*!!! KeyboardInterrupt !!!*", "Interrupted while the summary was printed*"])
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert [result["question_id"] for result in report["results"]] == ["q1", "q2", "q3"]


def test_a_run_without_questions_keeps_pytests_own_behaviour(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    pytester.makeconftest("def pytest_terminal_summary(terminalreporter):\n    raise KeyboardInterrupt\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret != pytest.ExitCode.INTERRUPTED
    assert "KeyboardInterrupt" in result.stderr.str()
