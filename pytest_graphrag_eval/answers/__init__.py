"""Answer metrics: claims correctness (LLM or lexical judge), RAGAS answer relevance,
exact match / token F1, and custom LLM metrics declared in configuration.

Callers need only `AnswerSettings` and `build_answer_scorers(settings, client)`;
the modules below it own one metric or one concern each.
"""

from pytest_graphrag_eval.answers.metric import AnswerInputs, Outcome
from pytest_graphrag_eval.answers.scorers import (
    AnswerJudgeScorer,
    DeterministicAnswerScorer,
    build_answer_metrics,
    build_answer_scorers,
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
    "build_answer_scorers",
]
