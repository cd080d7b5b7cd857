"""Answer metrics: claims correctness, RAGAS answer relevance, exact match / token F1, custom metrics.

Names load on first use (`lazy_names`), so a module that needs no judge does not import the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers.metric import AnswerInputs as AnswerInputs
    from pytest_graphrag_eval.answers.metric import MetricOutcome as MetricOutcome
    from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer as AnswerJudgeScorer
    from pytest_graphrag_eval.answers.scorers import DeterministicAnswerScorer as DeterministicAnswerScorer
    from pytest_graphrag_eval.answers.scorers import build_answer_metrics as build_answer_metrics
    from pytest_graphrag_eval.answers.settings import AnswerSettings as AnswerSettings
    from pytest_graphrag_eval.answers.settings import CustomMetric as CustomMetric
    from pytest_graphrag_eval.answers.settings import OutputField as OutputField

# Each name, and the module that defines it.
_HOMES = {
    **dict.fromkeys(("AnswerInputs", "MetricOutcome"), "pytest_graphrag_eval.answers.metric"),
    **dict.fromkeys(
        ("AnswerJudgeScorer", "DeterministicAnswerScorer", "build_answer_metrics"),
        "pytest_graphrag_eval.answers.scorers",
    ),
    **dict.fromkeys(
        ("AnswerSettings", "CustomMetric", "OutputField"), "pytest_graphrag_eval.answers.settings"
    ),
}
__all__ = sorted(_HOMES)


__getattr__ = lazy_names(__name__, globals(), _HOMES)
