"""CATALOGUE: every result key the built-in scorers declare, in one place.

Each scorer declares what it writes (`produces`, see `scoring.ResultKey`);
this module sits above the scorer packages (which may not import each other)
and gathers those declarations with the keys every result starts with. The
gates' missing-metric hints, the terminal summary's columns and the
documentation's table of result keys are read from here.
"""

from __future__ import annotations

from pytest_graphrag_eval.answers.retrieval_judges import RetrievalJudgeScorer
from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer, DeterministicAnswerScorer
from pytest_graphrag_eval.retrieval.erag_scorer import ERagScorer
from pytest_graphrag_eval.retrieval.scorer import RetrievalScorer
from pytest_graphrag_eval.scoring import BASE_KEYS, KeyCatalogue
from pytest_graphrag_eval.steps.scorer import StepsScorer

BUILTIN_SCORERS = (
    StepsScorer,
    RetrievalScorer,
    ERagScorer,
    DeterministicAnswerScorer,
    AnswerJudgeScorer,
    RetrievalJudgeScorer,
)
CATALOGUE = KeyCatalogue([*BASE_KEYS, *(key for scorer in BUILTIN_SCORERS for key in scorer.produces)])
