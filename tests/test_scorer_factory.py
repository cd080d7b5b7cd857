"""One scorer factory: the plugin and the library build the same scorers, sharing one judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphrag_eval import run_evaluation
from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.answers.retrieval_judges import RetrievalJudgeScorer
from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.evaluation import make_context
from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.scorer_factory import all_group_matches, build_scorers
from pytest_graphrag_eval.steps.groups import score_steps
from pytest_graphrag_eval.testing import FakeOpenAIServer

MODEL_GENERATOR = {"generator": {"model": "gpt-4o-mini"}, "metric": "exact_match"}


def shape(scorers: list) -> list[tuple[str, str]]:
    return [(type(scorer).__name__, scorer.name) for scorer in scorers]


def test_the_factory_puts_every_llm_backed_scorer_on_the_one_judge(llm_settings: LLMSettings) -> None:
    judge = JudgeClient(llm_settings)
    answers = AnswerSettings(judge="llm", retrieval_judges=True, relevance=True)
    scorers = build_scorers(answers, judge)
    assert [scorer.name for scorer in scorers[:3]] == ["steps", "retrieval", "erag"]
    judged = next(scorer for scorer in scorers if isinstance(scorer, AnswerJudgeScorer))
    retrieval = next(scorer for scorer in scorers if isinstance(scorer, RetrievalJudgeScorer))
    assert retrieval.client is judge
    assert all(metric.client is judge for metric in judged.metrics)  # type: ignore[attr-defined]
    context = make_context("last_group", judge, {"erag": MODEL_GENERATOR}, source="qa/corpus.yaml: settings")
    assert context.erag is not None and context.erag.uses_llm


def test_erag_settings_are_checked_when_built_and_name_their_source() -> None:
    with pytest.raises(
        ConfigurationError, match=r"^qa/corpus\.yaml: settings: erag settings: the generator needs an LLM"
    ):
        make_context("last_group", None, {"erag": MODEL_GENERATOR}, source="qa/corpus.yaml: settings")
    with pytest.raises(
        ConfigurationError, match=r"^b\.yaml: settings: erag settings: unknown key\(s\) model"
    ):
        make_context("last_group", None, {"erag": {"model": "x"}}, source="b.yaml: settings")


def test_the_retrieval_judge_follows_the_steps_scorer_matching() -> None:
    select = {"name": "sparql_query", "args": {"query": "SELECT 1"}, "output": "{}"}
    retrieve = {"name": "retrieval", "args": {"query": "q"}, "output": "[]"}
    reference = [[select], [retrieve]]
    actual = [retrieve, {"name": "other"}, select]
    assert all_group_matches(reference, actual) == score_steps(reference, actual, "all_groups").matches


def test_the_library_with_a_config_file_runs_the_factory_scorers(
    tmp_path: Path, fake_openai: FakeOpenAIServer, llm_settings: LLMSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run_evaluation(config)` builds and closes its own judge and gives the keys `build_scorers` gives."""
    monkeypatch.setenv("OPENAI_API_KEY", llm_settings.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.chdir(tmp_path)  # the environment's judge caches in the working directory
    counts = {"reference_claims_count": 1, "actual_claims_count": 1, "matching_claims_count": 1}
    fake_openai.set_chat_handler(lambda body: json.dumps({**counts, "reason": "same"}))
    config = tmp_path / "answers.yaml"
    config.write_text("judge: llm\n", encoding="utf-8")
    corpus = [
        {"template_id": "t", "questions": [{"id": "q", "question_text": "Q?", "reference_answer": "A"}]}
    ]
    responses = {"q": {"actual_answer": "A"}}
    from_file = run_evaluation(corpus, responses, config)
    answers = AnswerSettings(judge="llm")
    factory = run_evaluation(corpus, responses, scorers=build_scorers(answers, JudgeClient(llm_settings)))
    assert from_file == factory
    assert from_file[0]["answer_f1"] == 1.0
