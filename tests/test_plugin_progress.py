"""Progress of a live run: on a terminal a status while items wait, nothing otherwise."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _pytest._io import TerminalWriter
from child_pytest import CHILD_RUN_OPTIONS
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.plugin.progress import ProgressLine, status_text
from pytest_graphrag_eval.testing import FakeOpenAIServer

VERDICT = json.dumps(
    {"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 2, "reason": "all"}
)
ARGS = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-responses",
    "responses.jsonl",
    "--graphrag-judge",
    "llm",
    "--graphrag-concurrency",
    "1",
    "--graphrag-no-cache",
    "-p",
    "no:cacheprovider",
]


def test_status_text_says_questions_judge_calls_cost_and_time_left() -> None:
    text = status_text(12, 300, 40, 64, 0.012, 30.0)
    assert text == "graphrag 12/300 questions | judge 40 done, 64 queued | $0.0120 | ~12m00s left"
    assert status_text(0, 3, 0, 0, 0.0, 1.0) == "graphrag 0/3 questions"


def test_status_is_written_after_the_line_and_erased_leaving_pytests_line_intact() -> None:
    out = io.StringIO()
    writer = TerminalWriter(out)
    writer.fullwidth = 80
    writer.write("corpus.yaml ..")
    now = [0.0]
    line = ProgressLine(writer, lambda: "graphrag 2/5 questions", clock=lambda: now[0])
    line.tick()  # the item just started waiting: nothing yet
    assert out.getvalue() == "corpus.yaml .."
    now[0] = 1.0
    line.tick()
    assert out.getvalue() == "corpus.yaml .. graphrag 2/5 questions"
    line.done()
    shown = len(" graphrag 2/5 questions")
    assert out.getvalue().endswith("\b" * shown + " " * shown + "\b" * shown)
    assert writer.width_of_current_line == len("corpus.yaml ..")  # pytest's bookkeeping untouched


def test_status_never_wraps_a_narrow_terminal() -> None:
    out = io.StringIO()
    writer = TerminalWriter(out)
    writer.fullwidth = 30
    writer.write("corpus.yaml ......")
    line = ProgressLine(writer, lambda: "graphrag 6/9 questions | judge 1 done", clock=iter([0, 5]).__next__)
    line.tick()
    line.tick()
    assert out.getvalue() == "corpus.yaml ......"  # too little room: nothing rather than a broken line


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    """Run pytest with its output on a pseudo-terminal, as in an interactive shell; return what it wrote.

    The timeouts only stop a hang: a busy shared machine can take minutes for a run that takes seconds.
    """
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args], cwd=cwd, env=env, stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: pytest exited
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif process.poll() is not None:
            break
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def slow_judge(pytester: pytest.Pytester):
    with FakeOpenAIServer(latency=0.8, chat_text=VERDICT) as server:
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        env["PYTEST_ADDOPTS"] = CHILD_RUN_OPTIONS  # none of the outer run's, no unrelated plugin
        yield pytester, env


def test_progress_is_shown_on_a_terminal(slow_judge) -> None:
    pytester, env = slow_judge
    output = run_in_terminal(ARGS, pytester.path, env)
    assert "3 passed" in output
    assert "graphrag 0/3 questions | judge 0 done, 1 queued" in output or "graphrag 1/3 questions" in output
    assert "\b" in output  # erased before pytest reported the item


def test_progress_is_quiet_when_the_output_is_not_a_terminal(slow_judge, monkeypatch) -> None:
    pytester, env = slow_judge
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, env[name])
    result = pytester.runpytest_subprocess(*ARGS)
    result.assert_outcomes(passed=3)
    assert "questions |" not in result.stdout.str() and "\b" not in result.stdout.str()
