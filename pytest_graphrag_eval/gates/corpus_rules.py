"""A corpus file's own rules (thresholds, gates, scoring settings), parsed once when it is collected,
so nothing reads a corpus file's settings again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import gates_from_yaml
from pytest_graphrag_eval.gates.thresholds import CorpusThresholds, parse_corpus_thresholds
from pytest_graphrag_eval.retrieval.erag_config import erag_uses_llm

SCORING_SETTINGS = ("tool_names", "retrieval_k", "erag")


@dataclass(frozen=True)
class CorpusRules:
    """What one corpus file configures besides its questions."""

    file: str | None
    thresholds: CorpusThresholds
    gates: tuple[Gate, ...]
    scoring: Mapping[str, Any]  # the settings a scoring context is made from (SCORING_SETTINGS)

    @property
    def erag_needs_llm(self) -> bool:
        """Whether the corpus's eRAG names a model generator or the LLM-judge metric."""
        return erag_uses_llm(self.scoring.get("erag"))


def corpus_rules(corpus: Corpus) -> CorpusRules:
    """Parse a corpus's thresholds and gates (a `CorpusError` names the file and field)."""
    return CorpusRules(
        file=corpus.file,
        thresholds=parse_corpus_thresholds(corpus),
        gates=tuple(gates_from_yaml(corpus.settings.get("gates"), SourceLocation(file=corpus.file))),
        scoring={key: corpus.settings[key] for key in SCORING_SETTINGS if key in corpus.settings},
    )
