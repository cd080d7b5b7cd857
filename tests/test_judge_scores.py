"""Calibrating a custom judged metric on scored labels: Krippendorff's alpha and the scores' cutoff."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import judge_support
import pytest
import yaml

from pytest_graphrag_eval.testing import FakeOpenAIServer

KEY = "sk-test-JUDGE-SCORES-9012"
# (question, answer, the person's score); the scripted judge gives 0.9 to a polite answer, else 0.2.
SCORED = [
    ("q01", "Please note: NO1.", 1.0),
    ("q02", "Please: NO1.", 0.8),
    ("q03", "NO1, please.", 0.6),
    ("q04", "NO1.", 0.3),
    ("q05", "NO1!", 0.0),
    ("q06", "It is NO1.", 0.7),  # the person finds it polite enough; the judge does not
    ("q07", "Please, NO1.", 0.2),  # the person does not; the judge does
    ("q08", "NO1 it is.", 0.1),
]


def politeness(body: dict[str, Any]) -> str:
    answer = judge_support.block(body["messages"][1]["content"], "actual_answer")
    score = 0.9 if "please" in answer.lower() else 0.2
    return json.dumps({"score": score, "reason": "polite" if score > 0.5 else "curt"})


def brute_force_alpha(pairs: list[tuple[float, float]]) -> float:
    pooled = [value for pair in pairs for value in pair]
    n = len(pooled)
    within = sum(2 * (a - b) ** 2 for a, b in pairs) / n
    between = sum((x - y) ** 2 for x, y in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return 1 - within / between


def write_politeness_project(tmp_path: Path) -> None:
    (tmp_path / "corpus.yaml").write_text(yaml.safe_dump(judge_support.corpus()), encoding="utf-8")
    (tmp_path / "answers.yaml").write_text(
        yaml.safe_dump(
            {
                "judge": "none",
                "custom_metrics": [
                    {
                        "name": "politeness",
                        "inputs": ["question", "actual_answer"],
                        "instructions": "Rate how polite the answer is.",
                        "outputs": {"score": {"type": "number", "min": 0, "max": 1}, "reason": "text"},
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    labels = [
        {
            "question_id": q,
            "metric": "politeness",
            "answer": a,
            "score": s,
            "by": "alice",
            "date": "2026-11-21",
        }
        for q, a, s in SCORED
    ]
    (tmp_path / "labels.jsonl").write_text(
        "".join(json.dumps(label) + "\n" for label in labels), encoding="utf-8"
    )


def calibrate(tmp_path: Path, server: FakeOpenAIServer, *options: str) -> None:
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "graphrag-eval-judge"),
            "--corpus=corpus.yaml",
            "--labels=labels.jsonl",
            "--answers-config=answers.yaml",
            "--threshold=politeness_score>=0.5",
            "--report=calibration.json",
            *options,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "", "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_scored_labels_of_a_custom_metric_report_alpha_and_kappa(tmp_path: Path) -> None:
    write_politeness_project(tmp_path)
    with FakeOpenAIServer(expected_api_key=KEY) as server:
        server.set_chat_handler(politeness)
        calibrate(tmp_path, server, "--no-cache")
    summary = json.loads((tmp_path / "calibration.json").read_text())["judge_calibration"]["metrics"][
        "politeness"
    ]
    judge_scores = [0.9 if "please" in answer.lower() else 0.2 for _, answer, _ in SCORED]
    pairs = [(person, judge) for (_, _, person), judge in zip(SCORED, judge_scores, strict=True)]
    assert summary["score_key"] == "politeness_score" and summary["cutoff"] == 0.5
    assert summary["alpha"] == pytest.approx(brute_force_alpha(pairs))
    assert summary["mean_absolute_difference"] == pytest.approx(
        sum(abs(a - b) for a, b in pairs) / len(pairs)
    )
    # Held to the 0.5 cutoff: both sides pass 4 of 8 and agree on 6: kappa (0.75 - 0.5) / 0.5.
    assert summary["accuracy"] == pytest.approx(0.75) and summary["kappa"] == pytest.approx(0.5)
    assert sorted(item["question_id"] for item in summary["disagreements"]) == ["q06", "q07"]
    assert {item["judge_reason"] for item in summary["disagreements"]} == {"polite", "curt"}


def test_no_cache_neither_reads_nor_writes_the_judge_cache(tmp_path: Path) -> None:
    write_politeness_project(tmp_path)
    with FakeOpenAIServer(expected_api_key=KEY) as server:
        server.set_chat_handler(politeness)
        calibrate(tmp_path, server, "--no-cache")
        assert server.count("chat") == len(SCORED)
        assert not (tmp_path / ".graphrag-cache").exists()
        calibrate(tmp_path, server)  # writes the cache ...
        calibrate(tmp_path, server)  # ... which this run reads: no new call
        assert server.count("chat") == 2 * len(SCORED)
        calibrate(tmp_path, server, "--no-cache")  # a cache is there, and not read
        assert server.count("chat") == 3 * len(SCORED)
