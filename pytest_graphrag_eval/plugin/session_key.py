"""How the collection nodes reach the run's session: a stash key typed by what they need of it.

The nodes (`items.py`) ask the session for their question's outcome, the thresholds and the baseline;
the session (`session.py`) creates the nodes' corpus files. Typing the key by this protocol instead of
the session class keeps the two modules from importing each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.run.runner import AnsweredQuestion


class ItemSession(Protocol):
    """What the corpus file and question nodes use of the run's session."""

    settings: PluginSettings
    thresholds: ThresholdResolver
    baseline: JsonObject | None
    baseline_name: str | None

    @property
    def references_only(self) -> bool: ...

    def register_corpus(self, corpus: Corpus, path: Path) -> CorpusRules: ...

    def baseline_result(self, question_id: str) -> JsonObject | None: ...

    def outcome_for(self, question: Question) -> AnsweredQuestion: ...

    def is_corpus_file(self, path: Path) -> bool: ...


SESSION_KEY: pytest.StashKey[ItemSession] = pytest.StashKey()
