"""The example project's graph, agent, corpus and recordings agree, through the library API.

These tests use the example exactly as shipped: its pytest.ini thresholds and
gates, its committed corpus.yaml and recordings. A stale recording or corpus,
or an agent change that breaks a template, fails here before it confuses a user.
"""

from __future__ import annotations

import configparser
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_graphrag_eval import Corpus, compute_aggregates, load_corpus, load_responses, run_evaluation
from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.gates.corpus_rules import corpus_rules
from pytest_graphrag_eval.gates.suite_gates import combine_gates, evaluate_gates, parse_gate_list
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver, check_thresholds, parse_threshold_list
from pytest_graphrag_eval.generate import answer_reader
from pytest_graphrag_eval.generate.generator import generate
from pytest_graphrag_eval.generate.templates import load_templates
from pytest_graphrag_eval.graph.factory import open_endpoint
from pytest_graphrag_eval.scorer_factory import build_scorers

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
RECORDED = EXAMPLE / "recordings" / "responses.jsonl"
REGRESSION = EXAMPLE / "recordings" / "regression.jsonl"
XFAIL_QUESTION = "largest-capacity-zone"
# What RegressedGridAgent breaks (see example_project/grid_agent/regressed.py).
REGRESSED_STEPS = {
    "ac-lines-no1-no2",  # an HVDC link leaks into the AC lines
    "ac-lines-no2-no5",
    "capacity-no1",  # both windings summed: totals doubled
    "capacity-no2",
    "capacity-no4",
    "lines-by-length-drammen",  # ascending instead of longest first
    "lines-by-length-tonstad",
    "lines-by-length-narvik",
}
REGRESSED_ERROR = "connected-roros"  # "RØROS" folded to "RROS" is not found
METRIC_PREFIXES = ("steps_score", "answer_", "retrieval_")


@pytest.fixture(scope="module")
def example() -> Iterator[dict[str, ModuleType]]:
    """The example's modules, imported from example_project/ as its scripts and conftest do."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(EXAMPLE / "scripts"))
        patch.syspath_prepend(str(EXAMPLE))
        names = ("grid_agent", "build_graph", "record")
        yield {name: importlib.import_module(name) for name in names}
    for name in [*names, "example_files"]:
        sys.modules.pop(name, None)
    for name in [module for module in sys.modules if module.startswith("grid_agent.")]:
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(EXAMPLE / "corpus.yaml")


@pytest.fixture(scope="module")
def store(example: dict[str, ModuleType]) -> Any:
    return example["grid_agent"].load_store()


@pytest.fixture(scope="module")
def live_responses(example: dict[str, ModuleType], store: Any) -> dict[str, dict[str, Any]]:
    agent = example["grid_agent"].GridAgent(store)
    return {response["question_id"]: response for response in example["record"].record(agent)}


def evaluate(corpus: Corpus, responses: dict[str, Any], steps_scope: str = "last_group") -> dict[str, Any]:
    """Results by question id, scored as the example's pytest.ini configures (lexical judge)."""
    scorers = build_scorers(AnswerSettings(judge="lexical"), None)
    results = run_evaluation(corpus, responses, scorers=scorers, steps_scope=steps_scope)
    return {result["question_id"]: result for result in results}


def ini_lines(key: str) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(EXAMPLE / "pytest.ini", encoding="utf-8")
    return [line.strip() for line in parser["pytest"][key].splitlines() if line.strip()]


def failed_thresholds(corpus: Corpus, results: dict[str, Any]) -> dict[str, list[str]]:
    """Missed thresholds per question, from the example's ini, template and question levels."""
    failures = {}
    resolver = ThresholdResolver(parse_threshold_list(ini_lines("graphrag_thresholds"), "ini"))
    layers = corpus_rules(corpus).thresholds
    for template in corpus.templates:
        for question in template.questions:
            thresholds = resolver.for_parsed(layers, template.template_id, question.question_id)
            checks = check_thresholds(results[question.question_id], thresholds)
            missed = [check.message for check in checks if not check.passed]
            if missed:
                failures[question.question_id] = missed
    return failures


def failed_gates(corpus: Corpus, results: dict[str, Any]) -> list[str]:
    gates = combine_gates([*parse_gate_list(ini_lines("graphrag_gates"), "ini"), *corpus_rules(corpus).gates])
    outcome = evaluate_gates(gates, compute_aggregates(list(results.values())))
    return [result.message for result in outcome if not result.passed]


def metrics(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key.startswith(METRIC_PREFIXES)}


def without_elapsed(response: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in response.items() if key != "elapsed_sec"}


def test_graph_file_is_what_the_generator_writes(example: dict[str, ModuleType]) -> None:
    committed = (EXAMPLE / "grid" / "grid.ttl").read_text(encoding="utf-8")
    assert example["build_graph"].build_turtle() == committed


@pytest.mark.parametrize("msgspec", [True, False], ids=["msgspec", "standard-library"])
def test_corpus_file_is_what_the_generator_makes_of_its_templates(
    msgspec: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same bytes whether answers are read by msgspec's decoder or by the generic parse."""
    if not msgspec:
        monkeypatch.setattr(answer_reader, "msgspec", None)
    committed = (EXAMPLE / "corpus.yaml").read_text(encoding="utf-8")
    endpoint = open_endpoint(str(EXAMPLE / "grid" / "grid.ttl"))
    try:
        generation = generate(load_templates(EXAMPLE / "templates.yaml"), endpoint)
    finally:
        endpoint.close()
    generation.write(tmp_path / "corpus.yaml", "templates.yaml")
    assert (tmp_path / "corpus.yaml").read_text(encoding="utf-8") == committed


def test_corpus_loads_cleanly_and_shows_each_feature(corpus: Corpus) -> None:
    questions = list(corpus.questions())
    assert 15 <= len(questions) <= 30
    assert [q.question_id for q in questions if q.reference_problems] == []
    assert [q.question_id for q in questions if q.xfail] == [XFAIL_QUESTION]
    assert any(template.thresholds for template in corpus.templates)
    steps = [step for q in questions for group in q.reference_steps or [] for step in group]
    assert {step["name"] for step in steps} == {"iri_discovery", "sparql_query", "retrieval"}
    assert any(step.get("ordered") for step in steps)


def test_live_agent_passes_every_threshold_and_gate(
    corpus: Corpus, live_responses: dict[str, dict[str, Any]]
) -> None:
    results = evaluate(corpus, live_responses)
    answered = [result for key, result in results.items() if key != XFAIL_QUESTION]
    assert {result["steps_score"] for result in answered} == {1.0}
    assert min(result["answer_f1"] for result in answered) == 1.0
    assert failed_thresholds(corpus, results).keys() == {XFAIL_QUESTION}
    assert failed_gates(corpus, results) == []


def test_live_agent_also_matches_every_earlier_step_group(
    corpus: Corpus, live_responses: dict[str, dict[str, Any]]
) -> None:
    results = evaluate(corpus, live_responses, steps_scope="all_groups")
    scores = {key: result["steps_score"] for key, result in results.items() if key != XFAIL_QUESTION}
    assert set(scores.values()) == {1.0}


def test_unsupported_question_gets_an_error_response(live_responses: dict[str, dict[str, Any]]) -> None:
    response = live_responses[XFAIL_QUESTION]
    assert response.keys() == {"question_id", "status", "error"}
    assert response["status"] == "error"


def test_retrieval_question_reports_retrieval_metrics(
    corpus: Corpus, live_responses: dict[str, dict[str, Any]]
) -> None:
    result = evaluate(corpus, live_responses)["described-wind-farm"]
    assert result["retrieval_recall@5"] == 1.0
    assert result["retrieval_precision@5"] == pytest.approx(0.8)


def test_recorded_responses_are_current(live_responses: dict[str, dict[str, Any]]) -> None:
    recorded = load_responses(RECORDED)
    assert list(recorded) == list(live_responses)
    for question_id, response in recorded.items():
        assert without_elapsed(response) == without_elapsed(live_responses[question_id]), question_id


def test_replaying_the_recording_gives_the_live_scores(
    corpus: Corpus, live_responses: dict[str, dict[str, Any]]
) -> None:
    live = evaluate(corpus, live_responses)
    replayed = evaluate(corpus, load_responses(RECORDED))
    assert {key: metrics(result) for key, result in replayed.items()} == {
        key: metrics(result) for key, result in live.items()
    }


def test_regression_recording_is_what_the_regressed_agent_answers(
    example: dict[str, ModuleType], store: Any
) -> None:
    agent = example["grid_agent"].RegressedGridAgent(store)
    live = [without_elapsed(response) for response in example["record"].record(agent)]
    assert [without_elapsed(response) for response in load_responses(REGRESSION).values()] == live


def test_regression_fails_exactly_the_intended_questions_and_a_gate(corpus: Corpus) -> None:
    results = evaluate(corpus, load_responses(REGRESSION))
    lowered = {key for key, result in results.items() if result.get("steps_score", 1.0) < 1.0}
    assert lowered == REGRESSED_STEPS
    errors = {key for key, result in results.items() if result["status"] == "error"}
    assert errors == {REGRESSED_ERROR, XFAIL_QUESTION}
    assert failed_thresholds(corpus, results).keys() == REGRESSED_STEPS | errors
    assert results["capacity-no1"]["answer_f1"] < 1.0  # the doubled total is also a wrong answer
    assert any(message.startswith("micro:steps_score.mean") for message in failed_gates(corpus, results))


def test_agent_is_deterministic_apart_from_timing(example: dict[str, ModuleType], store: Any) -> None:
    agent = example["grid_agent"].GridAgent(store)
    question = "List all substations connected to substation SAUDA via an AC or DC line"
    first, second = agent.answer("q", question), agent.answer("q", question)
    assert without_elapsed(first) == without_elapsed(second)
    ids = [step["id"] for step in first["actual_steps"]]
    assert len(set(ids)) == len(ids) == 2
    assert first["total_tokens"] == first["input_tokens"] + first["output_tokens"] > 0
    assert first["elapsed_sec"] >= 0


def test_question_text_cannot_inject_sparql(example: dict[str, ModuleType], store: Any) -> None:
    tools = example["grid_agent"].tools.GridTools(store)
    output = tools.autocomplete_search('X")) } SELECT * WHERE { ?s ?p ?o } #', "cim:Substation")
    assert example["grid_agent"].store.bindings(output) == []
    agent = example["grid_agent"].GridAgent(store)
    response = agent.answer("q", 'List all transformers within substation X" } #')
    assert response["status"] == "error"
