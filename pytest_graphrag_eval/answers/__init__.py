"""Answer metrics: claims correctness, RAGAS answer relevance, exact match / token F1, custom metrics.

Names load on first use (`lazy_names`), so a module that needs no judge does not import the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers.metric import AnswerInputs, MetricOutcome
    from pytest_graphrag_eval.answers.scorers import (
        AnswerJudgeScorer,
        DeterministicAnswerScorer,
        build_answer_metrics,
    )
    from pytest_graphrag_eval.answers.settings import AnswerSettings, CustomMetric, OutputField

# Each name, and the module that defines it.
_HOMES = {
    "AnswerInputs": "pytest_graphrag_eval.answers.metric",
    "MetricOutcome": "pytest_graphrag_eval.answers.metric",
    "AnswerJudgeScorer": "pytest_graphrag_eval.answers.scorers",
    "DeterministicAnswerScorer": "pytest_graphrag_eval.answers.scorers",
    "build_answer_metrics": "pytest_graphrag_eval.answers.scorers",
    "AnswerSettings": "pytest_graphrag_eval.answers.settings",
    "CustomMetric": "pytest_graphrag_eval.answers.settings",
    "OutputField": "pytest_graphrag_eval.answers.settings",
}
__all__ = [
    "AnswerInputs",
    "AnswerJudgeScorer",
    "AnswerSettings",
    "CustomMetric",
    "DeterministicAnswerScorer",
    "MetricOutcome",
    "OutputField",
    "build_answer_metrics",
]


__getattr__ = lazy_names(__name__, globals(), _HOMES)
