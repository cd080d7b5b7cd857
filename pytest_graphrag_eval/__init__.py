"""pytest-graphrag-eval: regression-test question-answering agents with pytest.

The scoring core never imports pytest, so library users get the plugin's numbers. Public names load
on first use (PEP 562), so the merge and report layer skip the evaluation's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

if TYPE_CHECKING:
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


__getattr__ = lazy_names(__name__, globals(), _HOMES)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
