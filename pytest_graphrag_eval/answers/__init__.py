"""Answer metrics: claims correctness (LLM or lexical judge), RAGAS answer relevance,
exact match / token F1, and custom LLM metrics declared in configuration.

Callers need only `AnswerSettings` and `build_answer_scorers(settings, client)`;
the modules below it own one metric or one concern each.
"""

from .metric import AnswerInputs, Outcome
from .scorers import AnswerJudgeScorer, DeterministicAnswerScorer, build_answer_metrics, build_answer_scorers
from .settings import AnswerSettings, CustomMetric, OutputField

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
