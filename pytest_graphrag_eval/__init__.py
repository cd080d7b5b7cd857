"""pytest-graphrag-eval: regression-test question-answering agents with pytest.

The scoring core below never imports pytest, so library users get the same
numbers as the plugin.
"""

from pytest_graphrag_eval.adapters import (
    OtelRecorder,
    from_langchain_messages,
    from_openai_messages,
    from_openai_responses,
    from_otel_spans,
    from_otlp_json,
    to_response,
)
from pytest_graphrag_eval.aggregates import compute_aggregates
from pytest_graphrag_eval.corpus.reference_corpus import (
    Corpus,
    Question,
    Template,
    corpus_from_data,
    load_corpus,
)
from pytest_graphrag_eval.corpus.responses import load_response_attempts, load_responses
from pytest_graphrag_eval.errors import (
    ConfigurationError,
    CorpusError,
    GraphragEvalError,
    InputError,
    ResponseError,
)
from pytest_graphrag_eval.evaluation import arun_evaluation, run_evaluation
from pytest_graphrag_eval.scoring import Scorer, ScoringContext

__all__ = [
    "ConfigurationError",
    "Corpus",
    "CorpusError",
    "GraphragEvalError",
    "InputError",
    "OtelRecorder",
    "Question",
    "ResponseError",
    "Scorer",
    "ScoringContext",
    "Template",
    "arun_evaluation",
    "compute_aggregates",
    "corpus_from_data",
    "from_langchain_messages",
    "from_openai_messages",
    "from_openai_responses",
    "from_otel_spans",
    "from_otlp_json",
    "load_corpus",
    "load_response_attempts",
    "load_responses",
    "run_evaluation",
    "to_response",
]
