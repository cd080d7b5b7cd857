"""The one scorer factory: the library and the plugin both call `build_scorers`, so both run the same
scorers in the same order on one judge. It sits above the scorer packages, so it connects them
(the retrieval judge gets `steps`' matching, which `answers` may not import)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.scoring import Scorer

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers.settings import AnswerSettings
    from pytest_graphrag_eval.llm.judge import Judge
    from pytest_graphrag_eval.steps.groups import StepMatch


def default_scorers() -> list[Scorer]:
    """Scorers that need no answer settings: steps, retrieval, and eRAG (a no-op unless configured)."""
    from pytest_graphrag_eval.retrieval.scorer import ERagScorer, RetrievalScorer
    from pytest_graphrag_eval.steps.scorer import StepsScorer

    return [StepsScorer(), RetrievalScorer(), ERagScorer()]


def builtin_scorer_classes() -> tuple[type[Scorer], ...]:
    """Every built-in scorer class, in the order `result_keys.DECLARED_KEYS` lists their keys."""
    from pytest_graphrag_eval.answers.retrieval_judges import RetrievalJudgeScorer
    from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer, DeterministicAnswerScorer
    from pytest_graphrag_eval.retrieval.scorer import ERagScorer, RetrievalScorer
    from pytest_graphrag_eval.steps.scorer import StepsScorer

    return (
        StepsScorer,
        RetrievalScorer,
        ERagScorer,
        DeterministicAnswerScorer,
        AnswerJudgeScorer,
        RetrievalJudgeScorer,
    )


def build_scorers(answers: AnswerSettings, judge: Judge | None) -> list[Scorer]:
    """The scorers for `answers`, every LLM-backed one on `judge`; eRAG is built per corpus instead
    (`evaluation.make_context`)."""
    from pytest_graphrag_eval.answers.retrieval_judges import RetrievalJudgeScorer
    from pytest_graphrag_eval.answers.scorers import (
        AnswerJudgeScorer,
        DeterministicAnswerScorer,
        build_answer_metrics,
    )

    scorers = default_scorers()
    scorers.append(DeterministicAnswerScorer())
    metrics = build_answer_metrics(answers, judge)
    if metrics:
        scorers.append(AnswerJudgeScorer(metrics, answers.repeats))
    if answers.retrieval_judges and judge is not None:  # without a judge build_answer_metrics raised
        model = answers.judge_model or judge.settings.model
        scorers.append(
            RetrievalJudgeScorer(judge, model, all_group_matches, answers.output_mode, answers.temperature)
        )
    return scorers


def all_group_matches(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]], actual_steps: Sequence[Mapping[str, Any]]
) -> Sequence[StepMatch]:
    """The steps scorer's matching of every reference group, which the retrieval judge follows."""
    from pytest_graphrag_eval.steps.groups import score_steps

    return score_steps(reference_steps, actual_steps, "all_groups").matches
