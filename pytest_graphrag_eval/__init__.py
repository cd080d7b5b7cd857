"""pytest-graphrag-eval: regression-test question-answering agents with pytest.

The scoring core below never imports pytest, so library users get the same
numbers as the plugin.
"""

from .aggregates import compute_aggregates
from .corpus import Corpus, Question, Template, corpus_from_data, load_corpus
from .errors import ConfigurationError, CorpusError, GraphragEvalError, InputError, ResponseError
from .evaluation import arun_evaluation, run_evaluation
from .responses import load_responses
from .scoring import Scorer, ScoringContext

__all__ = [
    "ConfigurationError",
    "Corpus",
    "CorpusError",
    "GraphragEvalError",
    "InputError",
    "Question",
    "ResponseError",
    "Scorer",
    "ScoringContext",
    "Template",
    "arun_evaluation",
    "compute_aggregates",
    "corpus_from_data",
    "load_corpus",
    "load_responses",
    "run_evaluation",
]
