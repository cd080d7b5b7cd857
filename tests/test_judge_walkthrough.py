"""The walk-through of docs/judge-and-reviews.md on the example project, step by step.

Calibrate the judge on the example's labels (the loopback OpenAI server plays the LLM, judging as
tests/scripted_judge.py does), review two failing questions of the regression recording, see the
next run honour both reviews, then change one recorded answer and see that review lapse with a word.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from judge_support import scripted

from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
REGRESSION = EXAMPLE / "recordings" / "regression.jsonl"
REVIEWS = EXAMPLE / "judging" / "reviews.yaml"
LABELS = EXAMPLE / "judging" / "labels.yaml"
KEY = "sk-test-WALKTHROUGH-5678"


def run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **env},
    )


def example_run(
    tmp_path: Path, responses: Path, *options: str
) -> tuple[subprocess.CompletedProcess[str], Any]:
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    completed = run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLE),
            "-p",
            "no:cacheprovider",
            "-q",
            f"--graphrag-responses={responses}",
            f"--graphrag-report={report}",
            *options,
        ]
    )
    assert report.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed, {result["question_id"]: result for result in json.loads(report.read_text())["results"]}


def test_calibrate_the_example_judge_on_its_labels_and_reviews(tmp_path: Path) -> None:
    with FakeOpenAIServer(expected_api_key=KEY) as server:
        server.set_chat_handler(scripted)
        completed = run(
            [
                str(Path(sys.executable).parent / "graphrag-eval-judge"),
                f"--corpus={EXAMPLE / 'corpus.yaml'}",
                f"--labels={LABELS}",
                f"--reviews={REVIEWS}",
                "--judge=llm",
                "--gate=judge:answer_correctness.labels>=13",
                f"--report={tmp_path / 'calibration.json'}",
                "--no-cache",
            ],
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY=KEY,
        )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    summary = json.loads((tmp_path / "calibration.json").read_text())["judge_calibration"]["metrics"]
    correctness = summary["answer_correctness"]
    # 12 labels and 2 reviews, one of an answer a label already judged: counted once
    assert correctness["labels"] == 13 and correctness["from_reviews"] == 1
    assert "judge calibration: answer_correctness by llm:" in completed.stdout


def test_reviews_decide_two_failing_questions_until_an_answer_changes(tmp_path: Path) -> None:
    _, results = example_run(tmp_path, REGRESSION, f"--graphrag-review-queue={tmp_path / 'queue.md'}")
    assert results["lines-by-length-drammen"]["outcome"] == "failed"
    assert results["capacity-no1"]["outcome"] == "failed"
    queue = (tmp_path / "queue.md").read_text()
    assert "`capacity-no1`" in queue and answer_fingerprint(results["capacity-no1"]["actual_answer"]) in queue

    reviewed, results = example_run(tmp_path, REGRESSION, f"--graphrag-reviews={REVIEWS}")
    drammen, capacity = results["lines-by-length-drammen"], results["capacity-no1"]
    assert drammen["outcome"] == "passed" and drammen["failures"] == []
    assert drammen["review"]["status"] == "applied" and drammen["review"]["by"] == ["ingrid"]
    assert capacity["outcome"] == "failed"
    assert capacity["failures"][0].startswith("decided by review: fail by ingrid on 2026-11-28")
    output = reviewed.stdout
    assert "lines-by-length-drammen: decided by review: pass by ingrid" in output
    assert "8 failed" in output  # nine failed before, one passed by review

    changed = tmp_path / "changed.jsonl"
    lines = []
    for line in REGRESSION.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["question_id"] == "lines-by-length-drammen":
            record["actual_answer"] += " All of them are in service."
        lines.append(json.dumps(record, ensure_ascii=False))
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lapsed, results = example_run(tmp_path, changed, f"--graphrag-reviews={REVIEWS}")
    assert results["lines-by-length-drammen"]["outcome"] == "failed"
    assert results["lines-by-length-drammen"]["review"]["status"] == "lapsed"
    assert results["capacity-no1"]["review"]["status"] == "applied"
    lapse = "lines-by-length-drammen: review lapsed: the answer changed since ingrid reviewed it"
    assert lapse in lapsed.stdout


def test_a_reviewers_reason_reaches_the_terminal_with_its_escape_sequences_inert(tmp_path: Path) -> None:
    """A reason typed into the review form went to the terminal as written: an escape sequence in it
    could clear the screen or retitle the window."""
    hostile = tmp_path / "reviews.yaml"
    text = REVIEWS.read_text(encoding="utf-8")
    hostile.write_text(
        text.replace("the order is cosmetic", "cosmetic\\e[2J\\e]0;owned\\a", 1), encoding="utf-8"
    )
    reviewed, results = example_run(tmp_path, REGRESSION, f"--graphrag-reviews={hostile}")
    assert results["lines-by-length-drammen"]["review"]["reason"].endswith("cosmetic\x1b[2J\x1b]0;owned\x07")
    assert "\x1b" not in reviewed.stdout and "\x07" not in reviewed.stdout
    assert "lines-by-length-drammen: decided by review: pass by ingrid" in reviewed.stdout
    assert "cosmetic\\x1b[2J\\x1b]0;owned\\x07" in reviewed.stdout


@pytest.mark.parametrize("broken", ["reason: [unclosed", "verdict: maybe"])
def test_a_reviews_file_broken_by_hand_is_a_usage_error_naming_the_line(tmp_path: Path, broken: str) -> None:
    text = REVIEWS.read_text(encoding="utf-8").replace("verdict: fail", broken, 1)
    bad = tmp_path / "reviews.yaml"
    bad.write_text(text, encoding="utf-8")
    completed = run(
        [sys.executable, "-m", "pytest", str(EXAMPLE), "-p", "no:cacheprovider", "-q",
         f"--graphrag-responses={REGRESSION}", f"--graphrag-reviews={bad}"]
    )  # fmt: skip
    assert completed.returncode == pytest.ExitCode.USAGE_ERROR
    assert "reviews.yaml:" in completed.stderr and "Traceback" not in completed.stderr + completed.stdout
