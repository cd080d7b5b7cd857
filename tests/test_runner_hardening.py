"""The question runner cannot hang: real agent concurrency, a per-question timeout, prompt Ctrl-C,
and a judge endpoint that refuses connections failing fast."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from child_pytest import interruptible_pytest
from conftest import TEST_API_KEY
from plugin_support import corpus, write_corpus

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import responses_from_memory
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.llm import JudgeClient, LLMError, LLMSettings
from pytest_graphrag_eval.run.runner import InlineRunner, LiveSource, ReplaySource
from pytest_graphrag_eval.scoring import ScoringContext


def _question(question_id: str) -> Question:
    return Question("t", question_id, f"{question_id}?", SourceLocation(question_id=question_id))


def _many_questions(count: int) -> list[dict]:
    questions = [
        {"id": f"q{index}", "question_text": f"Question {index}?", "reference_answer": f"Answer {index}"}
        for index in range(count)
    ]
    return [{"template_id": "many", "questions": questions}]


PEAK_CONFTEST = """
import threading
from pathlib import Path

BOUND = {bound}
lock = threading.Lock()
state = {{"now": 0, "peak": 0}}
everyone_in = threading.Event()

def pytest_graphrag_respond(question, config):
    with lock:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        if state["now"] >= BOUND:
            everyone_in.set()
    everyone_in.wait(timeout=60)  # a safety net only: with the bound reached, nobody waits
    with lock:
        state["now"] -= 1
    return {{"actual_answer": "Answer", "actual_steps": []}}

def pytest_sessionfinish(session):
    Path("peak.txt").write_text(str(state["peak"]))
"""


def test_sync_agent_concurrency_reaches_the_configured_bound_of_64(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, _many_questions(100))
    pytester.makeconftest(PEAK_CONFTEST.format(bound=64))
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-agent-concurrency", "64")
    result.assert_outcomes(passed=100)
    assert int((pytester.path / "peak.txt").read_text()) == 64


def test_a_hanging_agent_is_cut_by_the_timeout_and_does_not_block_the_next_question() -> None:
    release = threading.Event()

    def agent(question: Question) -> dict:
        if question.question_id == "hangs":
            release.wait(timeout=60)
        return {"actual_answer": "fine"}

    source = LiveSource(agent, concurrency=1, timeout=0.2)

    async def answer_both() -> list[dict | None]:
        return [await source.get(_question("hangs")), await source.get(_question("next"))]

    try:
        hung, following = asyncio.run(answer_both())
    finally:
        release.set()
    assert hung == {
        "question_id": "hangs",
        "status": "error",
        "error": "the agent did not answer within 0.2 s",
    }
    assert following is not None and following["actual_answer"] == "fine"


def test_an_agent_that_raises_timeout_itself_is_reported_as_such() -> None:
    def agent(question: Question) -> dict:
        raise TimeoutError("backend timed out")

    response = asyncio.run(LiveSource(agent, concurrency=2, timeout=30).get(_question("q")))
    assert response == {
        "question_id": "q",
        "status": "error",
        "error": "the agent hook raised TimeoutError: backend timed out",
    }


SLOW_CONFTEST = """
import time
from pathlib import Path

def pytest_graphrag_respond(question, config):
    if question.question_id == "q2":
        Path("slow-call-started").write_text("yes")
        time.sleep(30)
    return {"actual_answer": "The names are here.", "actual_steps": []}
"""


def test_ctrl_c_during_a_slow_agent_call_ends_the_run_with_a_valid_report(tmp_path: Path) -> None:
    (tmp_path / "corpus.yaml").write_text(yaml.safe_dump(corpus(), sort_keys=False), encoding="utf-8")
    (tmp_path / "conftest.py").write_text(SLOW_CONFTEST, encoding="utf-8")
    command = interruptible_pytest("-p", "no:cacheprovider", "--graphrag-corpus", "corpus.yaml")
    process = subprocess.Popen(
        [*command, "--graphrag-report", "report.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120  # safety net for a loaded machine, not a measurement
        while not (tmp_path / "slow-call-started").exists():
            assert process.poll() is None and time.monotonic() < deadline, "the slow call never started"
            time.sleep(0.05)
        time.sleep(0.2)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=25)  # the agent call alone would take 30 s
        print(f"exited {time.monotonic() - sent:.2f} s after SIGINT")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["metadata"]["interrupted"] is True
    assert [result["question_id"] for result in report["results"]] == ["q1", "q3"]


class ResettingEndpoint:
    """A TCP port that accepts each connection and resets it at once, counting the attempts."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self.attempts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            self.attempts += 1
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()

    def __enter__(self) -> ResettingEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def resetting_endpoint() -> Iterator[ResettingEndpoint]:
    with ResettingEndpoint() as endpoint:
        yield endpoint


def test_unreachable_judge_fails_fast_after_one_round_of_retries(
    resetting_endpoint: ResettingEndpoint, tmp_path: Path
) -> None:
    settings = LLMSettings(
        base_url=resetting_endpoint.base_url,
        api_key=TEST_API_KEY,
        cache_dir=tmp_path / "cache",
        timeout=5.0,
        max_retries=3,
        concurrency=4,
        backoff_base=0.01,
        backoff_max=0.05,
    )
    client = JudgeClient(settings)

    async def ask_all() -> list[BaseException | object]:
        calls = [client.chat([{"role": "user", "content": f"q{index}"}]) for index in range(40)]
        return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = asyncio.run(ask_all())
    assert all(isinstance(outcome, LLMError) for outcome in outcomes)
    messages = [str(outcome) for outcome in outcomes]
    assert sum("not sent: the endpoint refused" in message for message in messages) >= 30
    # Without the breaker: 40 calls x 4 attempts. With it: one call's attempts plus those in flight.
    bound = (settings.max_retries + 1) + 2 * settings.concurrency
    assert client.stats.refused_connections <= bound
    assert resetting_endpoint.attempts <= bound


def test_unreachable_judge_in_the_plugin_fails_every_question_fast(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, resetting_endpoint: ResettingEndpoint
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", resetting_endpoint.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    write_corpus(pytester, _many_questions(30))
    responses = "".join(
        json.dumps({"question_id": f"q{index}", "actual_answer": f"Answer {index}"}) + "\n"
        for index in range(30)
    )
    pytester.path.joinpath("responses.jsonl").write_text(responses, encoding="utf-8")
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-judge",
        "llm",
        "--graphrag-no-cache",
        "--graphrag-report",
        "report.json",
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    errors = [value for entry in report["results"] for key, value in entry.items() if key.endswith("_error")]
    assert len(report["results"]) == 30 and len(errors) >= 30
    assert any("refused" in error for error in errors)
    # Default settings: 5 attempts per call, 8 calls in flight; 30 questions would make 150 attempts.
    assert resetting_endpoint.attempts <= 5 + 2 * 8


class _InterruptedScorer:
    """A scorer that is mid-await when Ctrl-C arrives (the interrupt raised from a callback)."""

    name = "interrupted"

    async def score(self, question: Question, response: dict, context: ScoringContext) -> dict:
        asyncio.get_running_loop().call_soon(_raise_keyboard_interrupt)
        await asyncio.sleep(3600)
        return {}


def _raise_keyboard_interrupt() -> None:
    raise KeyboardInterrupt


def test_inline_runner_interrupted_mid_question_closes_without_a_pending_task() -> None:
    responses = responses_from_memory({"q1": {"actual_answer": "a"}, "q2": {"actual_answer": "b"}})
    runner = InlineRunner(ReplaySource(responses), [], lambda question: ScoringContext())
    first = runner.outcome(_question("q1"))
    assert first.result is not None and first.result["question_id"] == "q1"
    interrupted = InlineRunner(
        ReplaySource(responses), [_InterruptedScorer()], lambda question: ScoringContext()
    )
    with pytest.raises(KeyboardInterrupt):
        interrupted.outcome(_question("q2"))
    pending = asyncio.all_tasks(interrupted._loop)
    assert pending, "the interrupt must leave the question's task unfinished for close() to handle"
    interrupted.close()
    assert all(task.cancelled() for task in pending)
    assert interrupted.finished() == {}
    runner.close()
