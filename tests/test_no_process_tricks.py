"""Nothing in the user's process they did not ask for (issue 42): a plugin run and a merge fork no
child process, a plugin run leaves Python's garbage collector exactly as it found it, and a merge
stopped by SIGTERM (a cancelled CI job) leaves neither a process nor a temporary file behind.

Forks are counted by an `os.register_at_fork` hook installed in the process under test (a
conftest of the pytest run, the command line of the merge); the hook appends a line to a file, so it
is counted even by a process that ends without running its exit handlers.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from synthetic_corpus import write_synthetic_project

pytest_plugins = ["pytester"]

OPTIONS = [
    "--graphrag-corpus", "corpus.yaml", "--graphrag-judge", "lexical",
    "--graphrag-threshold", "steps_score>=1", "--graphrag-gate", "steps_score.mean>=0.5",
    "-p", "no:randomly", "-p", "no:cacheprovider",
]  # fmt: skip
FORK_COUNTER = """
import os

def _note_fork(log=os.path.join(os.path.dirname(os.path.abspath(__file__)), "forks.log")):
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(f"{os.getpid()}\\n")

os.register_at_fork(before=_note_fork)
"""
# The merge command with the same hook; `merge_command` is the console script's entry point.
COUNTED_MERGE = (
    "import os, sys\n"
    "def note(log=os.environ['FORK_LOG']):\n"
    "    with open(log, 'a', encoding='utf-8') as stream: stream.write(f'{os.getpid()}\\n')\n"
    "os.register_at_fork(before=note)\n"
    "from pytest_graphrag_eval.commands.merge import merge_command\n"
    "sys.argv[0] = 'graphrag-eval-merge'\n"
    "merge_command()\n"
)
MERGE = "import sys; from pytest_graphrag_eval.commands.merge import merge_command; merge_command()"
# The collector's state as a conftest sees it at points of the run after the plugin has loaded the
# corpus, scored questions and written every report (pytest_unconfigure runs after them all).
GC_PROBE = """
import gc, json, os

_LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gc_states.jsonl")

def _note(where):
    state = [gc.isenabled(), list(gc.get_threshold()), gc.get_freeze_count()]
    with open(_LOG, "a", encoding="utf-8") as stream:
        stream.write(json.dumps([where, state]) + "\\n")

def pytest_collection_finish(session):
    _note("collected")

def pytest_runtest_teardown(item, nextitem):
    if nextitem is None:
        _note("last item")

def pytest_unconfigure(config):
    _note("unconfigure")
"""


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", *OPTIONS, *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)


def forks_noted(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def test_a_plugin_run_with_a_baseline_html_and_markdown_forks_nothing(tmp_path: Path) -> None:
    """1,200 questions, compared with a baseline, all three reports: large enough for every path
    that once forked (the aggregates beside the comparison, the page built by two children)."""
    write_synthetic_project(tmp_path, 1_200, per_template=40)
    baseline = run_pytest(tmp_path, "--graphrag-responses", "baseline_responses.jsonl",
                          "--graphrag-report", "baseline.json")  # fmt: skip
    assert (tmp_path / "baseline.json").is_file(), baseline.stdout[-2000:]
    (tmp_path / "conftest.py").write_text(FORK_COUNTER, encoding="utf-8")
    run = run_pytest(
        tmp_path, "--graphrag-responses", "responses.jsonl", "--graphrag-baseline", "baseline.json",
        "--graphrag-report", "run.json", "--graphrag-markdown", "run.md", "--graphrag-html", "run.html",
    )  # fmt: skip
    report = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert len(report["results"]) == 1_200 and report["comparison"]["questions"], run.stdout[-2000:]
    assert (tmp_path / "run.md").is_file() and (tmp_path / "run.html").is_file()
    assert forks_noted(tmp_path / "forks.log") == []


def test_a_plugin_run_leaves_the_collector_as_it_found_it(pytester: pytest.Pytester) -> None:
    """The collector's state during and after an in-process run with every report is the caller's own:
    here thresholds no default has, so a reset would show too. (Frozen objects are not made here: the
    count of those left falls as they are freed, whoever frees them.)"""
    write_synthetic_project(pytester.path, 300, per_template=30)
    pytester.makeconftest(GC_PROBE)
    run = ["--graphrag-responses", "baseline_responses.jsonl", "--graphrag-report", "baseline.json"]
    assert pytester.runpytest_subprocess(*OPTIONS, *run).ret == pytest.ExitCode.TESTS_FAILED
    states = pytester.path / "gc_states.jsonl"
    states.unlink()
    before_thresholds = gc.get_threshold()
    gc.set_threshold(911, 13, 17)
    try:
        before = [gc.isenabled(), list(gc.get_threshold()), gc.get_freeze_count()]
        result = pytester.runpytest_inprocess(
            *OPTIONS, "--graphrag-responses", "responses.jsonl", "--graphrag-baseline", "baseline.json",
            "--graphrag-report", "run.json", "--graphrag-markdown", "run.md", "--graphrag-html", "run.html",
        )  # fmt: skip
        after = [gc.isenabled(), list(gc.get_threshold()), gc.get_freeze_count()]
    finally:
        gc.set_threshold(*before_thresholds)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a tenth of the answers are wrong
    assert (pytester.path / "run.html").is_file() and (pytester.path / "run.md").is_file()
    seen = [json.loads(line) for line in states.read_text(encoding="utf-8").splitlines()]
    assert [where for where, _ in seen] == ["collected", "last item", "unconfigure"]
    assert all(state == before for _, state in seen), seen
    assert after == before


@pytest.fixture(scope="module")
def ten_thousand_shards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 10,000-question run in three shard reports compared with a baseline (`shard-K.json`)."""
    folder = tmp_path_factory.mktemp("shards")
    write_synthetic_project(folder, 10_000, per_template=40)
    run_pytest(folder, "--graphrag-responses", "baseline_responses.jsonl",
               "--graphrag-report", "baseline.json")  # fmt: skip
    for index in (1, 2, 3):
        run_pytest(
            folder, "--graphrag-responses", "responses.jsonl", "--graphrag-baseline", "baseline.json",
            "--graphrag-shard", f"{index}/3", "--graphrag-report", f"shard-{index}.json",
        )  # fmt: skip
        assert (folder / f"shard-{index}.json").is_file()
    yield folder


SHARDS = ["shard-1.json", "shard-2.json", "shard-3.json"]


@pytest.mark.slow
def test_a_ten_thousand_question_merge_forks_nothing(ten_thousand_shards: Path) -> None:
    folder = ten_thousand_shards
    log = folder / "merge-forks.log"
    outputs = ["--report", "merged.json", "--markdown", "merged.md", "--html", "merged.html"]
    done = subprocess.run(
        [sys.executable, "-c", COUNTED_MERGE, *SHARDS, *outputs],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "FORK_LOG": str(log)},
    )
    assert "10000 questions" in done.stdout, done.stderr
    assert done.returncode in (0, 1) and (folder / "merged.html").is_file()
    assert json.loads((folder / "merged.json").read_text(encoding="utf-8"))["comparison"]["questions"]
    assert forks_noted(log) == []


@pytest.mark.slow
def test_a_merge_stopped_by_sigterm_leaves_no_process_and_no_temporary_file(
    ten_thousand_shards: Path, tmp_path: Path
) -> None:
    """SIGTERM while a report is being written (its temporary file seen beside it): the command exits
    with 128 + SIGTERM, removes that file, and no process of its session is left."""
    outputs = tmp_path / "out"
    outputs.mkdir()
    arguments = ["--report", str(outputs / "merged.json"), "--markdown", str(outputs / "merged.md")]
    arguments += ["--html", str(outputs / "merged.html")]
    caught_writing = 0
    for _ in range(5):  # the writes are short: a loaded machine may let one finish before it is seen
        merge = subprocess.Popen(
            [sys.executable, "-c", MERGE, *SHARDS, *arguments],
            cwd=ten_thousand_shards,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: whatever it started is found by it
        )
        writing = _wait_for_temporary_file(outputs, merge)
        merge.send_signal(signal.SIGTERM)
        _, stderr = merge.communicate(timeout=120)
        assert _processes_in_group(merge.pid) == []
        assert sorted(path.name for path in outputs.iterdir() if path.name.startswith(".")) == []
        if writing:
            assert merge.returncode == 128 + signal.SIGTERM, stderr
            assert b"Traceback" not in stderr
            caught_writing += 1
            if caught_writing == 2:
                break
        for path in outputs.iterdir():
            path.unlink()
    assert caught_writing >= 1, "the merge was never caught while it was writing a report"


def _wait_for_temporary_file(folder: Path, process: subprocess.Popen[bytes]) -> bool:
    """Poll until a temporary file is in `folder` (True) or the process has ended (False)."""
    while process.poll() is None:
        if any(entry.name.endswith(".tmp") for entry in os.scandir(folder)):
            return True
        time.sleep(0.0005)
    return False


def _processes_in_group(group: int) -> list[int]:
    """The live processes whose process group is `group` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry.name))
    return found
