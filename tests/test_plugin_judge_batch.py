"""`--graphrag-judge-batch`: judge calls through the Batch API of the loopback server, via the real SDK."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from child_pytest import interruptible_pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses
from test_plugin_progress import run_in_terminal

from pytest_graphrag_eval.answers.relevance import SYSTEM_MESSAGE as RELEVANCE_SYSTEM
from pytest_graphrag_eval.llm.batch import STATE_FOLDER
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply

SECRET = "sk-test-BATCH-7373"
JUDGED = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-responses",
    "responses.jsonl",
    "--graphrag-judge",
    "llm",
    "--graphrag-relevance",
    "--graphrag-report",
    "report.json",
    "-p",
    "no:cacheprovider",
]
BATCH = [*JUDGED, "--graphrag-judge-batch"]
SCORES = ("answer_f1", "answer_recall", "answer_precision", "answer_relevance", "outcome")


def judge(body: dict[str, Any]) -> str:
    """Relevance gets a generated question (then embedded: a call that needs this reply), others a verdict."""
    if body["messages"][0]["content"] == RELEVANCE_SYSTEM:
        return json.dumps({"question": "Which names are in the set?", "noncommittal": 0})
    counts = {"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 1}
    return json.dumps({**counts, "reason": "scripted"})


@pytest.fixture
def judged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(expected_api_key=SECRET) as server:
        server.set_chat_handler(judge)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        yield pytester, server


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))


def scores(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [tuple(result.get(key) for key in SCORES) for result in data["results"]]


def state_files(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / ".graphrag-cache" / STATE_FOLDER).glob("*.json"))


def test_batch_run_scores_as_a_direct_run_at_half_the_cost(judged) -> None:
    pytester, server = judged
    pytester.runpytest(*JUDGED, "--graphrag-no-cache").assert_outcomes(passed=3)
    direct = report(pytester)
    # Per question: one correctness call, three generated questions, one embeddings call of them.
    assert server.count("batches") == 0 and server.count("chat") == 12 and server.count("embeddings") == 3

    server.reset()
    quiet = pytester.runpytest(*BATCH)
    quiet.assert_outcomes(passed=3)
    assert "requests done" not in quiet.stdout.str(), "no status line when the output is not a terminal"
    batched = report(pytester)
    assert server.count("chat") == 0 and server.count("embeddings") == 0, "no judge call was sent directly"
    # Pass 1: correctness and relevance's question generation (chat); pass 2: the embeddings of the
    # generated questions, which need those replies.
    assert server.count("batches") == 2
    assert scores(batched) == scores(direct)
    assert all(result["answer_relevance"] is not None for result in batched["results"])
    spend, direct_spend = batched["judge_spend"], direct["judge_spend"]
    assert spend["requests"] == direct_spend["requests"] == 15
    assert (spend["input_tokens"], spend["output_tokens"]) == (
        direct_spend["input_tokens"],
        direct_spend["output_tokens"],
    )
    assert direct_spend["cost_usd"] > 0
    assert spend["cost_usd"] == pytest.approx(direct_spend["cost_usd"] / 2, abs=1e-6)  # rounded to 6 places
    assert [b["status"] for b in spend["batch"]["batches"]] == ["completed", "completed"]
    assert spend["batch"]["requests"] == 15 and spend["batch"]["unanswered_requests"] == 0
    assert state_files(pytester) == [], "a finished batch leaves no state behind"

    server.reset()
    again = pytester.runpytest(*BATCH)
    again.assert_outcomes(passed=3)
    assert server.count() == 0, "everything is cached: no batch, no call"
    assert scores(report(pytester)) == scores(direct)


def run_in_subprocess(pytester: pytest.Pytester, server: FakeOpenAIServer) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET}
    return subprocess.Popen(
        interruptible_pytest(*BATCH),
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for(condition: Any, process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        if process.poll() is not None:
            raise AssertionError(
                f"pytest ended before {what}:\n{process.stdout.read() if process.stdout else ''}"
            )
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_interrupted_batch_run_resumes_the_same_batch(judged) -> None:
    pytester, server = judged
    server.batch_in_progress_polls = 10**6  # the batch runs until the test lets it finish
    interrupt_while_polling(pytester, server)
    assert server.count("batches") == 1
    (state,) = state_files(pytester)
    batch_id = json.loads(state.read_text(encoding="utf-8"))["batch_id"]

    server.batch_in_progress_polls = 0
    resumed = pytester.runpytest(*BATCH)
    resumed.assert_outcomes(passed=3)
    # The first pass's batch was polled again, not sent again; only pass 2's embeddings are new.
    creations = [request.body for request in server.requests if request.endpoint == "batches"]
    assert len(creations) == 2 and creations[1]["endpoint"] == "/v1/embeddings"
    assert server.batch(batch_id)["status"] == "completed"
    spend = report(pytester)["judge_spend"]["batch"]
    assert [(b["id"], b["resumed"]) for b in spend["batches"]] == [(batch_id, True), (ANY, False)]
    assert all(result["answer_relevance"] is not None for result in report(pytester)["results"])
    assert state_files(pytester) == []
    resumed.stdout.fnmatch_lines(["*judge batch: 2 batches (1 resumed)*"])


@pytest.mark.parametrize("outcome", ["failed", "expired", "cancelled"])
def test_unfinished_batch_is_a_clear_error_and_keeps_what_it_answered(judged, outcome: str) -> None:
    pytester, server = judged
    server.batch_outcome = outcome
    server.batch_answered = 8  # expired and cancelled batches answer the first 8 of 12 chat lines
    result = pytester.runpytest(*BATCH, "--graphrag-threshold", "answer_f1>=0.1")
    data = report(pytester)
    answered = 0 if outcome == "failed" else 8
    (first, *_later) = data["judge_spend"]["batch"]["batches"]
    assert (first["status"], first["answered"], first["requests"]) == (outcome, answered, 12)
    result.stdout.fnmatch_lines(
        [f"*judge batch {first['id']} {outcome}: {answered} of 12 requests answered*"]
    )
    unanswered = data["judge_spend"]["batch"]["unanswered_ids"]
    assert unanswered, "questions without a reply are counted"
    result.stdout.fnmatch_lines(
        [f"*judge batch: {len(unanswered)} questions had judge requests no batch answered*"]
    )
    for question in data["results"]:
        errors = " ".join(str(v) for k, v in question.items() if k.endswith("_error"))
        if question["question_id"] in unanswered:
            assert f"no reply from the judge batch: judge batch {first['id']} ended {outcome}" in errors
    assert state_files(pytester) == [], "an ended batch is not resumed"

    server.reset()
    server.batch_outcome = "completed"
    pytester.runpytest(*BATCH).assert_outcomes(passed=3)
    first_batch = next(r.body for r in server.requests if r.endpoint == "batches")
    resent = server.batch(_first_batch_id(server))
    assert first_batch["endpoint"] == "/v1/chat/completions"
    assert resent["request_counts"]["total"] == 12 - answered, "answered requests came from the cache"
    assert all(result["answer_relevance"] is not None for result in report(pytester)["results"])


def _first_batch_id(server: FakeOpenAIServer) -> str:
    status = next(request for request in server.requests if request.endpoint == "batch_status")
    return status.path.rsplit("/", 1)[-1]


def test_error_lines_are_their_questions_judge_errors(judged) -> None:
    pytester, server = judged

    def failing_for_q2(body: dict[str, Any]) -> str | Reply:
        if "set two" in json.dumps(body):
            return Reply.bad_request("scripted refusal for set two")
        return judge(body)

    server.set_chat_handler(failing_for_q2)
    result = pytester.runpytest(*BATCH)
    data = report(pytester)
    assert data["judge_spend"]["batch"]["unanswered_ids"] == ["q2"]
    q2 = next(r for r in data["results"] if r["question_id"] == "q2")
    assert "no reply from the judge batch: judge batch " in q2["answer_eval_error"]
    assert "HTTP 400: scripted refusal for set two" in q2["answer_eval_error"]
    others = [r for r in data["results"] if r["question_id"] != "q2"]
    assert all(r["answer_f1"] is not None and r["answer_relevance"] is not None for r in others)
    result.stdout.fnmatch_lines(["*judge batch: 1 questions had judge requests no batch answered: q2*"])


def test_dry_run_says_how_many_requests_a_batch_would_hold(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(*BATCH, "--graphrag-dry-run")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*judge batch: 15 requests in at least 2 batches*at batch prices (50% of*"])
    assert server.count() == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--graphrag-cache-only"], "*--graphrag-judge-batch sends*--graphrag-cache-only sends none*"),
        (["--graphrag-no-cache"], "*--graphrag-judge-batch stores*--graphrag-no-cache*"),
        (["--graphrag-max-cost", "1"], "*billed as a whole*--graphrag-max-cost cannot stop it*"),
        (["--graphrag-max-calls", "5"], "*--graphrag-max-calls cannot stop it*"),
        (["-n", "2"], "*--graphrag-judge-batch sends the run's judge calls from one process: drop -n*"),
    ],
)
def test_contradictory_options_are_usage_errors(judged, extra: list[str], message: str) -> None:
    pytester, server = judged
    result = pytester.runpytest(*BATCH, *extra)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert server.count() == 0


def test_live_agent_is_asked_once_per_attempt_across_the_passes(judged) -> None:
    pytester, server = judged
    pytester.makeconftest(
        """
        import collections
        ASKED = collections.Counter()

        def pytest_graphrag_respond(question, config):
            ASKED[question.question_id] += 1
            return {"actual_answer": f"Answer {ASKED[question.question_id]} to {question.question_id}.",
                    "actual_steps": []}

        def pytest_sessionfinish(session):
            print("agent asked", sorted(ASKED.items()))
        """
    )
    live = [arg for arg in BATCH if arg not in ("--graphrag-responses", "responses.jsonl")]
    result = pytester.runpytest("-s", *live, "--graphrag-agent-repeats", "2")
    # Two passes (chat, then the embeddings that need its replies) and the scoring run: 2 attempts each.
    assert "agent asked [('q1', 2), ('q2', 2), ('q3', 2)]" in result.stdout.str()
    assert server.count("batches") == 2
    data = report(pytester)
    assert all(result["answer_relevance"] is not None for result in data["results"])
    assert data["judge_spend"]["batch"]["unanswered_requests"] == 0


def test_batch_progress_is_shown_on_a_terminal(judged) -> None:
    pytester, server = judged
    server.batch_in_progress_polls = 5  # about 2.5 s of polling: the status appears after 0.5 s
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET}
    env.pop("PYTEST_ADDOPTS", None)
    output = run_in_terminal(BATCH, pytester.path, env)
    assert "3 passed" in output
    assert "graphrag judge batch: 0/12 requests done (in_progress)" in output
    assert "\b" in output  # erased before the items report


def test_ragas_relevance_with_a_batch_is_a_usage_error(judged) -> None:
    pytester, server = judged
    pytester.path.joinpath("answers.yaml").write_text("relevance_backend: ragas\n", encoding="utf-8")
    result = pytester.runpytest(*BATCH, "--graphrag-answers-config", "answers.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragas sends its calls through ragas, outside the judge cache, batch*"])
    assert server.count() == 0


def interrupt_while_polling(pytester: pytest.Pytester, server: FakeOpenAIServer) -> str:
    """Run pytest in a subprocess and send it SIGINT while its batch is polled; what it printed."""
    process = run_in_subprocess(pytester, server)
    try:
        wait_for(lambda: server.count("batch_status") >= 2, process, "the batch was polled")
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    return output


def test_a_batch_the_server_does_not_know_is_sent_again_by_the_next_run(judged) -> None:
    pytester, server = judged
    server.batch_in_progress_polls = 10**6
    interrupt_while_polling(pytester, server)
    (state,) = state_files(pytester)
    state.write_text(json.dumps({"batch_id": "batch-unknown"}), encoding="utf-8")  # e.g. another account's
    server.batch_in_progress_polls = 0
    failed = pytester.runpytest(*BATCH)
    failed.stdout.fnmatch_lines(["*judge batch batch-unknown unknown: 0 of 12 requests answered*"])
    q1 = next(r for r in report(pytester)["results"] if r["question_id"] == "q1")
    assert "No such Batch object: batch-unknown" in q1["answer_eval_error"]
    assert state_files(pytester) == []
    pytester.runpytest(*BATCH).assert_outcomes(passed=3)
    assert server.count("batches") == 3  # the interrupted one, then both passes sent anew
