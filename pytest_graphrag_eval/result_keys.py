"""CATALOGUE: every result key the built-in scorers declare, gathered above the scorer packages (which
may not import each other) for gate hints, the terminal summary and the docs' table."""

from __future__ import annotations

from pytest_graphrag_eval.answers.result_keys import ANSWER_KEYS
from pytest_graphrag_eval.retrieval.result_keys import ERAG_KEYS, RETRIEVAL_KEYS
from pytest_graphrag_eval.scoring import BASE_KEYS, KeyCatalogue
from pytest_graphrag_eval.steps import STEPS_KEYS

# In `scorer_factory.builtin_scorer_classes()` order, from modules that import no judge.
DECLARED_KEYS = (
    *STEPS_KEYS,  # StepsScorer
    *RETRIEVAL_KEYS,  # RetrievalScorer
    *ERAG_KEYS,  # ERagScorer
    *ANSWER_KEYS,  # DeterministicAnswerScorer, AnswerJudgeScorer, RetrievalJudgeScorer
)
CATALOGUE = KeyCatalogue([*BASE_KEYS, *DECLARED_KEYS])
