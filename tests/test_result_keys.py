"""The scorers' result-key declarations are true, and what is derived from them holds.

Every key a built-in scorer writes, over the example project and the judged corpus of the differential
test (every LLM metric, repeated judgments, a custom evaluation, eRAG), must be one it declares, and
every declared score must be written somewhere. The hints, the summary columns and the names custom
metrics may not take are read from the same declarations.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TEST_API_KEY
from test_judged_metrics_differential import DATA, TONE_EVALUATION, our_judge

from pytest_graphrag_eval import arun_evaluation, load_corpus, load_responses
from pytest_graphrag_eval.aggregates import STEP_METRICS
from pytest_graphrag_eval.answers import (
    AnswerSettings,
    CustomMetric,
    OutputField,
    settings,
)
from pytest_graphrag_eval.answers.custom import CustomLLMMetric
from pytest_graphrag_eval.answers.judge_settings import resolve_judge_settings
from pytest_graphrag_eval.answers.lexical import LexicalCorrectness
from pytest_graphrag_eval.answers.retrieval_judges import RetrievalJudgeScorer
from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer, DeterministicAnswerScorer
from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import normalise_response
from pytest_graphrag_eval.errors import ConfigurationError, SourceLocation
from pytest_graphrag_eval.evaluation import base_result
from pytest_graphrag_eval.gates.metric_hints import missing_metric_hint
from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.report.run_terminal import score_columns
from pytest_graphrag_eval.result_keys import CATALOGUE, DECLARED_KEYS
from pytest_graphrag_eval.scorer_factory import build_scorers, builtin_scorer_classes, default_scorers
from pytest_graphrag_eval.scoring import (
    BASE_KEYS,
    SPREAD_SUFFIXES,
    KeyCatalogue,
    ResultKey,
    Scorer,
    ScoringContext,
)
from pytest_graphrag_eval.testing import FakeOpenAIServer

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
# Families whose members are named at run time (the cutoff k, the configured eRAG measures): any key they
# cover is declared. The other families (answer_, retrieval_, ...) only carry hints for misspelled names.
RUNTIME_FAMILIES = ("retrieval_recall@", "retrieval_precision@", "retrieval_ndcg@", "erag_")
NUMERIC_ROLES = ("score", "count", "tokens", "cost", "seconds")
_UNKNOWN = "no scorer produced this key"


def first_word(question: str, documents: list[str]) -> str:
    return next((text.split()[0] for text in documents if text.split()), "")


def exact(prediction: str, references: list[str]) -> float:
    return float(prediction in references)


class Recording:
    """Runs a scorer and keeps every key it returned."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self.name = scorer.name
        self.keys: set[str] = set()

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        keys = await self.scorer.score(question, response, context)
        self.keys.update(keys)
        return keys


def custom_keys(scorer: Scorer) -> set[str]:
    """The keys a scorer's custom metrics take from their settings, with their spreads."""
    keys = {
        key
        for metric in getattr(scorer, "metrics", [])
        if isinstance(metric, CustomLLMMetric)
        for key in metric.spec.result_keys()
    }
    return keys | {key + suffix for key in keys for suffix in SPREAD_SUFFIXES}


def undeclared(recording: Recording) -> list[str]:
    """Keys the scorer returned that its class does not declare."""
    declared = KeyCatalogue(type(recording.scorer).produces)  # type: ignore[attr-defined]
    scores = [name for name, key in declared.exact.items() if key.role == "score"]
    spreads = {name + suffix for name in scores for suffix in SPREAD_SUFFIXES}
    runtime = [family for family in declared.families if family.name in RUNTIME_FAMILIES]
    return sorted(
        key
        for key in recording.keys - declared.names() - spreads - custom_keys(recording.scorer)
        if not any(family.covers(key) for family in runtime)
    )


async def run(corpus: Any, responses: dict, scorers: Sequence[Scorer], **kwargs: Any) -> list[Recording]:
    recordings = [Recording(scorer) for scorer in scorers]
    results = await arun_evaluation(corpus, responses, scorers=recordings, **kwargs)
    assert sum(result["status"] == "success" for result in results) > len(results) / 2
    raised = [
        (result["question_id"], key, value)
        for result in results
        for key, value in result.items()
        if isinstance(value, str) and " scorer failed: " in value
    ]
    assert raised == []
    return recordings


_JUDGE_LOCK = threading.Lock()


def judge_handler(body: dict[str, Any]) -> str:
    with _JUDGE_LOCK:
        return our_judge(body)


async def example_runs() -> list[Recording]:
    """The example project's recordings with every scorer that needs no LLM, eRAG on Python callables."""
    corpus = load_corpus(EXAMPLE / "corpus.yaml")
    erag = {"erag": {"generator": f"{__name__}:first_word", "metric": f"{__name__}:exact"}}
    recordings = []
    for name in ("responses.jsonl", "regression.jsonl"):
        scorers = [*default_scorers(), DeterministicAnswerScorer(), AnswerJudgeScorer([LexicalCorrectness()])]
        responses = load_responses(EXAMPLE / "recordings" / name)
        recordings += await run(corpus, responses, scorers, options=erag)
    return recordings


async def judged_runs(server: FakeOpenAIServer, cache: Path) -> list[Recording]:
    """The differential test's corpus with a graphrag-eval config, then with repeated LLM judgments."""
    server.set_chat_handler(judge_handler)
    reference = yaml.safe_load((DATA / "reference.yaml").read_text(encoding="utf-8"))
    responses = json.loads((DATA / "responses.json").read_text(encoding="utf-8"))
    generation = {"provider": "openai", "model": "gpt-4o-mini", "base_url": server.base_url}
    config = {
        "llm": {
            "generation": {**generation, "api_key": TEST_API_KEY},
            "embedding": {
                "provider": "openai",
                "model": "text-embedding-3-small",
                "api_base": server.base_url,
            },
        },
        "custom_evaluations": [TONE_EVALUATION],
    }
    path = cache / "eval_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    resolved = resolve_judge_settings((), path)
    configured = resolved.answers
    judge = JudgeClient(resolved.llm)
    try:
        recordings = await run(reference, responses, build_scorers(configured, judge), judge=judge)
    finally:
        await judge.aclose()
    answers = AnswerSettings(judge="llm", relevance=True, retrieval_judges=True, repeats=2)
    llm = LLMSettings(base_url=server.base_url, api_key=TEST_API_KEY, cache_dir=cache / "llm-cache")
    async with JudgeClient(llm) as client:
        recordings += await run(reference, responses, build_scorers(answers, client))
    assert not server.handler_errors
    return recordings


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> list[Recording]:
    with FakeOpenAIServer(expected_api_key=TEST_API_KEY) as server:
        cache = tmp_path_factory.mktemp("judged")
        return asyncio.run(example_runs()) + asyncio.run(judged_runs(server, cache))


def test_every_builtin_scorer_wrote_keys(recordings: list[Recording]) -> None:
    writers = {type(recording.scorer) for recording in recordings if recording.keys}
    assert writers == set(builtin_scorer_classes())


def test_the_catalogue_lists_what_the_scorer_classes_declare() -> None:
    """The catalogue reads the answer scorers' declarations without importing them: the same keys."""
    assert tuple(key for scorer in builtin_scorer_classes() for key in scorer.produces) == DECLARED_KEYS


def test_each_scorer_writes_only_keys_it_declares(recordings: list[Recording]) -> None:
    for recording in recordings:
        assert undeclared(recording) == [], recording.name


def test_every_declared_score_is_written(recordings: list[Recording]) -> None:
    written = {key for recording in recordings for key in recording.keys}
    declared = {name for name, key in CATALOGUE.exact.items() if key.role == "score"}
    assert declared - written == set()
    assert {"retrieval_recall@5", "erag_success", "answer_f1_stdev", "tone_score"} <= written


def test_the_checks_catch_an_undeclared_key() -> None:
    recording = Recording(DeterministicAnswerScorer())
    recording.keys = {"answer_token_f1", "answer_token_recall", "retrieval_recall@5"}
    assert undeclared(recording) == ["answer_token_recall", "retrieval_recall@5"]


def test_base_result_writes_base_keys() -> None:
    question = next(load_corpus(EXAMPLE / "corpus.yaml").questions())
    response = {"actual_answer": "x", "actual_steps": [], "input_tokens": 1, "output_tokens": 2}
    where = SourceLocation(question_id=question.question_id)
    result = base_result(
        question, normalise_response({**response, "total_tokens": 3, "elapsed_sec": 0.5}, where)
    )
    assert set(result) <= {key.name for key in BASE_KEYS}
    assert {"reference_steps", "elapsed_sec", "total_tokens"} <= set(result)


def test_declared_numbers_follow_the_suffix_rule() -> None:
    """Reports read a key's kind from its suffix, as the catalogue does for keys nobody declared."""
    undeclared_reading = KeyCatalogue([])
    for name, key in CATALOGUE.exact.items():
        if key.role in NUMERIC_ROLES:
            assert undeclared_reading.role(name) == key.role, name
        else:
            assert undeclared_reading.role(name) == "score", name  # a text key takes no usage suffix


def test_every_declared_metric_has_a_missing_hint() -> None:
    declared = [name for name, key in CATALOGUE.exact.items() if key.role in NUMERIC_ROLES]
    assert "retrieval_judge_cost" in declared and "elapsed_sec" in declared
    for name in [*declared, *(family.name + "x" for family in CATALOGUE.families)]:
        assert _UNKNOWN not in missing_metric_hint(name), name
    assert _UNKNOWN in missing_metric_hint("tone_score")


def test_hints_and_shared_errors_come_from_the_declarations() -> None:
    assert missing_metric_hint("retrieval_recall@10").startswith("retrieval metrics need a reference step")
    assert missing_metric_hint("retrieval_context_f1").startswith("judged retrieval metrics")
    assert missing_metric_hint("answer_recal").startswith("answer metrics need")  # its family's text
    assert CATALOGUE.error_key("answer_matching_claims_count") == "answer_eval_error"
    assert CATALOGUE.error_key("answer_relevance") is None  # answer_relevance_error, the default


def test_summary_columns_and_roles() -> None:
    assert CATALOGUE.summary_columns() == ["steps_score", "answer_f1", "answer_relevance", "answer_token_f1"]
    result = {
        "template_id": "t",
        **dict.fromkeys(["answer_recall", "answer_exact_match", "answer_f1_stdev", "erag_cost"], 0.5),
        **dict.fromkeys(["total_tokens", "answer_eval_cost", "tone_count", "zeta", "answer_token_f1"], 0.5),
        **dict.fromkeys(["answer_f1", "retrieval_mrr", "erag_P_5", "tone_score"], 0.5),
    }
    assert score_columns([result]) == [
        "answer_f1",
        "answer_token_f1",
        "erag_P_5",
        "retrieval_mrr",
        "tone_score",
        "zeta",
    ]
    assert [CATALOGUE.role(key) for key in ("answer_f1_max", "my_cost", "retrieval_ndcg@3", "x")] == [
        "spread",
        "cost",
        "score",
        "score",
    ]


def test_reserved_names_are_the_declared_keys() -> None:
    """answers/ may not import the other scorer packages, so it lists their names; they must agree."""
    assert CATALOGUE.first_segments() == settings.RESERVED_PREFIXES
    assert CATALOGUE.names() == settings.BUILTIN_KEYS
    assert {"answer", "steps", "retrieval", "erag", "elapsed", "template"} <= settings.RESERVED_PREFIXES


def test_a_key_declared_twice_differently_is_refused() -> None:
    with pytest.raises(ValueError, match="'answer_f1' is declared twice"):
        KeyCatalogue([ResultKey("answer_f1", "score"), ResultKey("answer_f1", "score", column=1)])
    with pytest.raises(ValueError, match="role must be one of"):
        ResultKey("answer_f1", "number")
    with pytest.raises(ValueError, match="only scores"):
        ResultKey("answer_judge", "text", column=1)


@pytest.mark.parametrize("output", ["retrieval_mrr", "erag_cost", "steps_score", "elapsed_sec"])
def test_an_unprefixed_output_may_not_take_a_declared_key(output: str) -> None:
    with pytest.raises(ConfigurationError, match=f"result key\\(s\\) {output} are reserved"):
        CustomMetric("tone", ("question",), "Rate the tone.", (OutputField(output),), prefix_outputs=False)


def test_aggregated_step_metrics_are_the_declared_retrieval_judge_scores() -> None:
    """aggregates.py sits below the answers package it would read them from, so it lists them."""
    judged = [key.name for key in RetrievalJudgeScorer.produces if key.role == "score" and not key.prefix]
    assert list(STEP_METRICS) == judged
