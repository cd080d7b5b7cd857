"""eRAG configured in a corpus file: erag_* keys per question, thresholds and gates on them."""

from __future__ import annotations

import json

import pytest
from plugin_support import write_corpus, write_responses

DOCUMENTS = [
    {"id": "d1", "text": "Oslo hosts the transformers T1 and T2."},
    {"id": "d2", "text": "Bergen lies on the west coast."},
]
GENERATOR = """
def generate(question, documents):
    text = " ".join(documents)
    return "Oslo" if "Oslo" in text else "unknown"
"""


def corpus_with_erag(generator: str = "erag_generator:generate") -> dict:
    question = {
        "id": "q1",
        "question_text": "Which city hosts T1?",
        "reference_answer": "Oslo",
        "reference_steps": [[{"name": "retrieval", "args": {"k": 2}, "output": json.dumps([DOCUMENTS[0]])}]],
    }
    return {
        "erag": {"generator": generator, "metric": "exact_match", "metrics": ["P_1", "P_2", "success"]},
        "templates": [{"template_id": "city", "questions": [question]}],
    }


def retrieval_response(documents: list[dict]) -> dict:
    step = {
        "name": "retrieval",
        "id": "r1",
        "status": "success",
        "args": {"k": 2},
        "output": json.dumps(documents),
    }
    return {"question_id": "q1", "actual_answer": "Oslo", "actual_steps": [step]}


@pytest.fixture
def erag_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.syspathinsert()
    pytester.makepyfile(erag_generator=GENERATOR)
    write_corpus(pytester, corpus_with_erag())
    return pytester


def test_erag_keys_thresholds_and_gates(erag_project: pytest.Pytester) -> None:
    write_responses(erag_project, [retrieval_response(list(reversed(DOCUMENTS)))])
    result = erag_project.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-threshold",
        "erag_success>=1",
        "--graphrag-gate",
        "erag_P_1.mean>=0.5",
        "--graphrag-report",
        "report.json",
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, "the useful document is ranked second: P_1 = 0"
    report = json.loads((erag_project.path / "report.json").read_text())
    first = report["results"][0]
    assert (first["erag_P_1"], first["erag_P_2"], first["erag_success"]) == (0.0, 0.5, 1.0)
    assert first["retrieval_recall@2"] == 1.0
    assert report["aggregates"]["micro"]["erag_P_2"]["mean"] == 0.5


def test_bad_erag_settings_are_a_usage_error(erag_project: pytest.Pytester) -> None:
    write_corpus(erag_project, corpus_with_erag(generator="no_such_module:generate"))
    write_responses(erag_project, [retrieval_response(DOCUMENTS)])
    result = erag_project.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*corpus.yaml*no_such_module*"])
