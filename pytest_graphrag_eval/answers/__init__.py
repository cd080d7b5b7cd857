"""Answer metrics: claims correctness (LLM or lexical judge), RAGAS answer relevance,
exact match / token F1, and custom LLM metrics declared in configuration.

Callers need only `AnswerSettings`; `scorer_factory.build_scorers(settings, judge)`
builds the scorers. The modules below own one metric or one concern each.
"""

from pytest_graphrag_eval.answers.metric import AnswerInputs, Outcome
from pytest_graphrag_eval.answers.scorers import (
    AnswerJudgeScorer,
    DeterministicAnswerScorer,
    build_answer_metrics,
)
from pytest_graphrag_eval.answers.settings import AnswerSettings, CustomMetric, OutputField

__all__ = [
    "AnswerInputs",
    "AnswerJudgeScorer",
    "AnswerSettings",
    "CustomMetric",
    "DeterministicAnswerScorer",
    "Outcome",
    "OutputField",
    "build_answer_metrics",
]
