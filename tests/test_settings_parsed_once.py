"""Configuration is built once per process: the answers config file, the judge client, and each
corpus file's thresholds, gates and eRAG. Counted in real runs (plain and under xdist) by a conftest
that counts constructions of the objects each parse yields; nothing is replaced, the run is real."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import yaml

from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-PARSED-ONCE"
COUNTING_CONFTEST = """
import collections, json, os

from pytest_graphrag_eval.answers.config_file import AnswersConfig
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.thresholds import Threshold
from pytest_graphrag_eval.llm.client import JudgeClient
from pytest_graphrag_eval.retrieval.erag_config import ERagSetup

COUNTS = collections.Counter()


def count(cls, key):
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        COUNTS[key(self)] += 1

    cls.__init__ = __init__


count(AnswersConfig, lambda config: "answers config")
count(JudgeClient, lambda client: "judge client")
count(ERagSetup, lambda setup: "erag")
count(Gate, lambda gate: f"gate {gate.source} {gate.expression}")
count(Threshold, lambda t: f"threshold {t.source} {t.metric}{t.op}{t.limit:g}")


def pytest_sessionfinish(session):
    role = "worker" if hasattr(session.config, "workerinput") else "main"
    with open(f"counts-{role}-{os.getpid()}.json", "w") as handle:
        json.dump(COUNTS, handle)
"""
GENERATOR = (
    "def generate(question, documents):\n    return 'Oslo' if 'Oslo' in ' '.join(documents) else 'no'\n"
)
DOCUMENTS = json.dumps([{"id": "d1", "text": "Oslo hosts T1."}])


def corpus_file(name: str, base: float) -> dict[str, Any]:
    """Two templates of two questions, with thresholds at every level, a gate and eRAG."""
    templates = []
    for t in range(2):
        questions = [
            {
                "id": f"{name}-{t}-{q}",
                "question_text": f"Which city hosts T1 ({name} {t} {q})?",
                "reference_answer": "Oslo",
                "reference_steps": [[{"name": "retrieval", "output": DOCUMENTS}]],
                **({"thresholds": [f"retrieval_recall@10>={base + 0.03 + t / 100:g}"]} if q == 0 else {}),
            }
            for q in range(2)
        ]
        templates.append(
            {
                "template_id": f"{name}-t{t}",
                "thresholds": [f"retrieval_ap>={base + 0.02 + t / 100:g}"],
                "questions": questions,
            }
        )
    return {
        "thresholds": [f"retrieval_mrr>={base + 0.01:g}"],
        "gates": [f"retrieval_mrr.mean>={base:g}"],
        "erag": {"generator": "erag_generator:generate", "metric": "exact_match"},
        "templates": templates,
    }


def expected_corpus_counts() -> Counter[str]:
    """Each corpus threshold and gate, once."""
    counts: Counter[str] = Counter()
    for base in (0.1, 0.2):
        counts[f"threshold corpus retrieval_mrr>={base + 0.01:g}"] += 1
        counts[f"gate corpus micro:retrieval_mrr.mean>={base:g}"] += 1
        for t in range(2):
            counts[f"threshold template retrieval_ap>={base + 0.02 + t / 100:g}"] += 1
            counts[f"threshold question retrieval_recall@10>={base + 0.03 + t / 100:g}"] += 1
    return counts


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    verdict = {
        "reference_claims_count": 1,
        "actual_claims_count": 1,
        "matching_claims_count": 1,
        "reason": "ok",
    }
    with FakeOpenAIServer(expected_api_key=SECRET, chat_text=json.dumps(verdict)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("PYTHONPATH", str(pytester.path))  # the eRAG generator, in every process
        pytester.makepyfile(erag_generator=GENERATOR)
        pytester.makeconftest(COUNTING_CONFTEST)
        (pytester.path / "corpus").mkdir()
        responses = []
        for name, base in (("a", 0.1), ("b", 0.2)):
            data = corpus_file(name, base)
            (pytester.path / "corpus" / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
            for template in data["templates"]:
                for question in template["questions"]:
                    step = {"name": "retrieval", "id": "c1", "status": "success", "output": DOCUMENTS}
                    responses.append(
                        {"question_id": question["id"], "actual_answer": "Oslo", "actual_steps": [step]}
                    )
        (pytester.path / "responses.jsonl").write_text(
            "".join(json.dumps(response) + "\n" for response in responses), encoding="utf-8"
        )
        (pytester.path / "answers.yaml").write_text("judge: llm\nrepeats: 3\n", encoding="utf-8")
        yield pytester, server


def run_counts(pytester: pytest.Pytester, *workers: str) -> dict[str, Counter[str]]:
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", *workers,
        "--graphrag-corpus", "corpus", "--graphrag-responses", "responses.jsonl",
        "--graphrag-answers-config", "answers.yaml", "--graphrag-judge-repeats", "1",
        "--graphrag-threshold", "steps_score>=0", "--graphrag-gate", "error_rate<=0",
    )  # fmt: skip
    result.assert_outcomes(passed=8)
    return {
        path.name: Counter(json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(pytester.path.glob("counts-*.json"))
    }


def test_each_setting_is_built_once_per_process(project: tuple[pytest.Pytester, FakeOpenAIServer]) -> None:
    pytester, server = project
    (counts,) = run_counts(pytester).values()
    assert server.count("chat") == 8, "--graphrag-judge-repeats 1 over the file's repeats: 3"
    assert counts == Counter(
        {
            "answers config": 1,
            "judge client": 1,
            "erag": 2,  # one per corpus file
            "threshold cli steps_score>=0": 1,
            "gate cli micro:error_rate<=0": 1,
            **expected_corpus_counts(),
        }
    )


def test_under_xdist_each_process_builds_each_setting_once(
    project: tuple[pytest.Pytester, FakeOpenAIServer],
) -> None:
    runs = run_counts(project[0], "-n", "2")
    assert len(runs) == 3, runs.keys()
    options = {"answers config": 1, "judge client": 1, "threshold cli steps_score>=0": 1}
    options["gate cli micro:error_rate<=0"] = 1
    for name, counts in runs.items():
        if name.startswith("counts-main"):  # the controller collects nothing: corpus gates from its workers
            gates = {key: n for key, n in expected_corpus_counts().items() if key.startswith("gate")}
            assert counts == Counter({**options, **gates}), name
        else:  # every worker collects every file
            assert counts == Counter({**options, "erag": 2, **expected_corpus_counts()}), name
