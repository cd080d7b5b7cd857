"""pytest-graphrag-eval: regression-test question-answering agents with pytest.

The scoring core never imports pytest, so library users get the plugin's numbers. Public names load
on first use (PEP 562), so the merge and report layer skip the evaluation's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

# The one place the version is written (pyproject.toml reads it): the reports record it without
# `importlib.metadata`, whose imports were a tenth of a merge's start-up.
__version__ = "0.1.0"

if TYPE_CHECKING:
    from pytest_graphrag_eval.adapters import OtelRecorder as OtelRecorder
    from pytest_graphrag_eval.adapters import from_langchain_messages as from_langchain_messages
    from pytest_graphrag_eval.adapters import from_openai_messages as from_openai_messages
    from pytest_graphrag_eval.adapters import from_openai_responses as from_openai_responses
    from pytest_graphrag_eval.adapters import from_otel_spans as from_otel_spans
    from pytest_graphrag_eval.adapters import from_otlp_json as from_otlp_json
    from pytest_graphrag_eval.adapters import to_response as to_response
    from pytest_graphrag_eval.aggregates import compute_aggregates as compute_aggregates
    from pytest_graphrag_eval.corpus.reference_corpus import Corpus as Corpus
    from pytest_graphrag_eval.corpus.reference_corpus import Question as Question
    from pytest_graphrag_eval.corpus.reference_corpus import Template as Template
    from pytest_graphrag_eval.corpus.reference_corpus import corpus_from_data as corpus_from_data
    from pytest_graphrag_eval.corpus.reference_corpus import load_corpus as load_corpus
    from pytest_graphrag_eval.corpus.responses import load_response_attempts as load_response_attempts
    from pytest_graphrag_eval.corpus.responses import load_responses as load_responses
    from pytest_graphrag_eval.errors import ConfigurationError as ConfigurationError
    from pytest_graphrag_eval.errors import CorpusError as CorpusError
    from pytest_graphrag_eval.errors import GraphragEvalError as GraphragEvalError
    from pytest_graphrag_eval.errors import InputError as InputError
    from pytest_graphrag_eval.errors import ResponseError as ResponseError
    from pytest_graphrag_eval.evaluation import arun_evaluation as arun_evaluation
    from pytest_graphrag_eval.evaluation import run_evaluation as run_evaluation
    from pytest_graphrag_eval.scoring import Scorer as Scorer
    from pytest_graphrag_eval.scoring import ScoringContext as ScoringContext

# Each public name and the module that defines it.
_HOMES = {
    "OtelRecorder": "pytest_graphrag_eval.adapters",
    "from_langchain_messages": "pytest_graphrag_eval.adapters",
    "from_openai_messages": "pytest_graphrag_eval.adapters",
    "from_openai_responses": "pytest_graphrag_eval.adapters",
    "from_otel_spans": "pytest_graphrag_eval.adapters",
    "from_otlp_json": "pytest_graphrag_eval.adapters",
    "to_response": "pytest_graphrag_eval.adapters",
    "compute_aggregates": "pytest_graphrag_eval.aggregates",
    "Corpus": "pytest_graphrag_eval.corpus.reference_corpus",
    "Question": "pytest_graphrag_eval.corpus.reference_corpus",
    "Template": "pytest_graphrag_eval.corpus.reference_corpus",
    "corpus_from_data": "pytest_graphrag_eval.corpus.reference_corpus",
    "load_corpus": "pytest_graphrag_eval.corpus.reference_corpus",
    "load_response_attempts": "pytest_graphrag_eval.corpus.responses",
    "load_responses": "pytest_graphrag_eval.corpus.responses",
    "ConfigurationError": "pytest_graphrag_eval.errors",
    "CorpusError": "pytest_graphrag_eval.errors",
    "GraphragEvalError": "pytest_graphrag_eval.errors",
    "InputError": "pytest_graphrag_eval.errors",
    "ResponseError": "pytest_graphrag_eval.errors",
    "arun_evaluation": "pytest_graphrag_eval.evaluation",
    "run_evaluation": "pytest_graphrag_eval.evaluation",
    "Scorer": "pytest_graphrag_eval.scoring",
    "ScoringContext": "pytest_graphrag_eval.scoring",
}

__all__ = sorted(_HOMES)


__getattr__ = lazy_names(__name__, globals(), _HOMES)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
