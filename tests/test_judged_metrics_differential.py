"""Our LLM-judged metrics against graphrag-eval 6.6.1's, with the same scripted verdicts.

graphrag_eval_results.json was recorded by tests/data/graphrag_eval_judged/record_judged.py:
graphrag-eval (through LiteLLM and RAGAS) judged the folder's questions on the loopback server, which
answered with the rules of scripted_judge.py. Here our judges get the same verdicts for the same texts,
so the numbers must agree: answer correctness, relevance (the server's embeddings are deterministic)
and a custom evaluation per question, the retrieval metrics on every judged step, and the statistics of
compute_aggregates.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import scripted_judge
import yaml
from conftest import TEST_API_KEY

from pytest_graphrag_eval import compute_aggregates, run_evaluation
from pytest_graphrag_eval.answers.llm_correctness import SYSTEM_MESSAGE as CORRECTNESS_SYSTEM
from pytest_graphrag_eval.answers.relevance import SYSTEM_MESSAGE as RELEVANCE_SYSTEM
from pytest_graphrag_eval.answers.retrieval_judges import PRECISION_SYSTEM, RECALL_SYSTEM
from pytest_graphrag_eval.testing import FakeOpenAIServer

DATA = Path(__file__).parent / "data" / "graphrag_eval_judged"
# A graphrag-eval custom evaluation both sides run (judged by `our_judge`'s tone rule).
TONE_EVALUATION = {
    "name": "tone",
    "inputs": ["question", "actual_answer"],
    "instructions": "Does the answer commit to an answer?",
    "outputs": {"tone_score": "1 if it commits, 0 if not", "tone_reason": "one word"},
}
RECORDED = json.loads((DATA / "graphrag_eval_results.json").read_text(encoding="utf-8"))
KEYS = tuple(
    f"retrieval_{side}_{measure}"
    for side in ("answer", "context")
    for measure in ("recall", "precision", "f1")
)
TOLERANCE = 1e-8  # RAGAS adds 1e-10 to the precision denominator


def block(text: str, name: str) -> list[str]:
    return re.findall(rf"<{name}>\n(.*?)\n</{name}>", text, re.DOTALL)


def our_judge(body: dict[str, Any]) -> str:
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if "- tone_score:" in system:
        score, reason = scripted_judge.tone(block(user, "actual_answer")[0])
        return json.dumps({"tone_score": score, "tone_reason": reason})
    if system == RELEVANCE_SYSTEM:
        (answer,) = block(user, "actual_answer")
        return json.dumps(scripted_judge.generated_question(answer))
    if system == CORRECTNESS_SYSTEM:
        ((reference,), (actual,)) = block(user, "reference_answer"), block(user, "actual_answer")
        return json.dumps({**scripted_judge.claim_counts(reference, actual), "reason": "scripted"})
    (reference,) = block(user, "reference")
    contexts = block(user, "context")
    if system == RECALL_SYSTEM:
        pairs = scripted_judge.attributions(reference, "\n".join(contexts))
        statements = [{"statement": text, "reason": "scripted", "attributed": flag} for text, flag in pairs]
        return json.dumps({"statements": statements})
    assert system == PRECISION_SYSTEM and len(contexts) == 1
    return json.dumps({"reason": "scripted", "useful": scripted_judge.useful(contexts[0], reference)})


@pytest.fixture
def ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer) -> tuple[list, dict]:
    monkeypatch.chdir(tmp_path)
    lock = threading.Lock()

    def handler(body: dict[str, Any]) -> str:
        with lock:
            return our_judge(body)

    fake_openai.set_chat_handler(handler)
    generation = {"provider": "openai", "model": "gpt-4o-mini", "base_url": fake_openai.base_url}
    embedding = {"provider": "openai", "model": "text-embedding-3-small", "api_base": fake_openai.base_url}
    config = {
        "llm": {"generation": {**generation, "api_key": TEST_API_KEY}, "embedding": embedding},
        "custom_evaluations": [TONE_EVALUATION],
    }
    path = tmp_path / "eval_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    reference = yaml.safe_load((DATA / "reference.yaml").read_text(encoding="utf-8"))
    responses = json.loads((DATA / "responses.json").read_text(encoding="utf-8"))
    results = run_evaluation(reference, responses, path)
    assert not fake_openai.handler_errors
    return results, compute_aggregates(results, path)


def test_recorded_with_graphrag_eval() -> None:
    assert RECORDED["note"].startswith("graphrag-eval 6.6.1")


def test_answer_correctness_relevance_and_custom_evaluation_agree(ours: tuple[list, dict]) -> None:
    results, aggregates = ours
    for result in results:
        expected = RECORDED["answers"][result["question_id"]]
        assert {"answer_relevance", "tone_score", "tone_reason"} <= set(expected)
        assert {key: result[key] for key in expected} == pytest.approx(expected), result["question_id"]
    for key in ("answer_recall", "answer_precision", "answer_f1", "answer_relevance", "tone_score"):
        assert aggregates["micro"][key] == pytest.approx(RECORDED["aggregates"]["micro"][key])


def test_every_judged_step_agrees(ours: tuple[list, dict]) -> None:
    results, _ = ours
    for result in results:
        recorded = RECORDED["steps"][result["question_id"]]
        steps = [{key: step[key] for key in KEYS if key in step} for step in result["actual_steps"]]
        assert [sorted(step) for step in steps] == [sorted(step) for step in recorded], result["question_id"]
        for step, expected in zip(steps, recorded, strict=True):
            for key, value in expected.items():
                assert step[key] == pytest.approx(value, abs=TOLERANCE), (result["question_id"], key)


def test_template_step_statistics_agree(ours: tuple[list, dict]) -> None:
    _, aggregates = ours
    for template, expected in RECORDED["aggregates"]["per_template"].items():
        steps = aggregates["per_template"][template]["steps"]
        assert sorted(key for key in steps if key in KEYS) == sorted(expected)
        for key, stats in expected.items():
            assert steps[key] == pytest.approx(stats, abs=TOLERANCE), (template, key)


def test_micro_context_metrics_agree_where_each_question_has_one_judged_step(ours: tuple[list, dict]) -> None:
    """Micro statistics are over questions here, over steps in graphrag-eval: equal with one step each."""
    _, aggregates = ours
    for key in KEYS[3:]:
        assert aggregates["micro"][key] == pytest.approx(RECORDED["aggregates"]["micro"][key], abs=TOLERANCE)
