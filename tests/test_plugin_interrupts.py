"""Ctrl-C stays the user's: the plugin changes no signal handler (issue 42), a Ctrl-C while the
outputs are written stops them without a half-written file or a traceback, and an interrupted
reference update says that it is incomplete (issue 30). Each runs pytest in a subprocess, which sends
itself the interrupt."""

from __future__ import annotations

import json

import pytest
from graph_support import RELEASE_1, RELEASE_2, outputs_on, small_corpus, small_responses, write_project
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.history.store import open_history

pytest_plugins = ["pytester"]

# Ctrl-C as at a terminal (this run's parent may have been started with SIGINT ignored), sent by the
# run to itself at one moment of its end: as the report is built (nothing written yet), once the JSON
# report's bytes are in its temporary file (before the rename), or inside the history's transaction.
CTRL_C_AT_THE_END = """
import os
import signal

import pytest_graphrag_eval.run.pipeline as pipeline
from pytest_graphrag_eval.history.backends import SqliteBackend

signal.signal(signal.SIGINT, signal.default_int_handler)
WHEN = {when!r}
_build_document, _fsync, _insert_many = pipeline.build_document, os.fsync, SqliteBackend.insert_many


def ctrl_c(now):
    if now == WHEN:
        os.kill(os.getpid(), signal.SIGINT)


def build_document(*args, **kwargs):
    ctrl_c("building")
    return _build_document(*args, **kwargs)


def fsync(fd):
    _fsync(fd)
    ctrl_c("writing")


def insert_many(*args, **kwargs):
    _insert_many(*args, **kwargs)
    ctrl_c("recording")


pipeline.build_document, os.fsync, SqliteBackend.insert_many = build_document, fsync, insert_many
"""
OUTPUTS = ("report.json", "summary.md")


@pytest.mark.parametrize("when", ["building", "writing", "recording"])
def test_ctrl_c_while_the_outputs_are_written_stops_them_whole_in_one_line(
    pytester: pytest.Pytester, when: str
) -> None:
    """The plugin held SIGINT back with a handler of its own here; Ctrl-C is the user's now (issue 42).
    Whatever it stops, a file is whole or absent, no temporary file is left and the history holds the
    whole run or nothing, and the run ends with one line, not a traceback."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(CTRL_C_AT_THE_END.format(when=when))
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-report", "report.json", "--graphrag-markdown", "summary.md",
        "--graphrag-history", "history.db", "-p", "no:cacheprovider",
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "KeyboardInterrupt" not in result.stderr.str(), output
    result.stdout.fnmatch_lines(["*graphrag-eval: interrupted (Ctrl-C) while the outputs were written*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED
    left = sorted(path.name for path in pytester.path.iterdir())
    assert [name for name in left if name.endswith(".tmp")] == [], left
    written = [name for name in OUTPUTS if name in left]
    assert written == (list(OUTPUTS) if when == "recording" else []), left
    if written:
        report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
        assert [result["question_id"] for result in report["results"]] == ["q1", "q2", "q3"]
    with open_history(str(pytester.path / "history.db")) as store:
        assert store.runs() == [] and store.waiting_shards() == []


SIGINT_HANDLER_AT_EVERY_HOOK = """
import json
import os
import signal

import pytest

SEEN = []
_fsync = os.fsync


def note(where):
    SEEN.append((where, signal.getsignal(signal.SIGINT)))


def fsync(fd):  # every output file is synced once, inside the end of the run's writing
    note("writing an output")
    _fsync(fd)


os.fsync = fsync


def pytest_configure(config):
    note("configure")


def pytest_sessionstart(session):
    note("sessionstart")


def pytest_collection_finish(session):
    note("collection_finish")


def pytest_runtest_call(item):
    note("runtest_call")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    note("sessionfinish")


def pytest_terminal_summary(terminalreporter):
    note("terminal_summary")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    note("unconfigure")
    first = SEEN[0][1]
    with open("handlers.json", "w", encoding="utf-8") as stream:
        json.dump([[where, handler is first, repr(handler)] for where, handler in SEEN], stream)
"""


def test_the_sigint_handler_is_the_users_at_every_hook_of_a_run(pytester: pytest.Pytester) -> None:
    """No handler of the plugin's, even while the outputs and the history record are written."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(SIGINT_HANDLER_AT_EVERY_HOOK)
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-report", "report.json", "--graphrag-markdown", "summary.md",
        "--graphrag-html", "report.html", "--graphrag-history", "history.db", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    seen = json.loads((pytester.path / "handlers.json").read_text(encoding="utf-8"))
    assert [where for where, same, _ in seen if not same] == [], seen
    assert {where for where, _, _ in seen} == {
        "configure", "sessionstart", "collection_finish", "runtest_call", "writing an output",
        "sessionfinish", "terminal_summary", "unconfigure",
    }  # fmt: skip
    assert [where for where, _, _ in seen].count("writing an output") == 3  # JSON, Markdown, HTML


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
