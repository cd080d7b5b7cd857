"""The stash key the collection nodes reach the run's session by, typed by a protocol of what they
need so that `items.py` and `session.py` do not import each other."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.run.judging import Judging
from pytest_graphrag_eval.run.runner import AnsweredQuestion


class ItemSession(Protocol):
    """What the corpus file and question nodes use of the run's session."""

    settings: PluginSettings
    thresholds: ThresholdResolver
    baseline: JsonObject | None
    baseline_name: str | None
    baseline_results: dict[str, JsonObject]  # each question's result in the baseline run, by id
    judging: Judging  # the reviews that decide questions' answers

    @property
    def references_only(self) -> bool: ...

    def register_corpus(self, corpus: Corpus, path: Path) -> CorpusRules: ...

    def outcome_for(self, question: Question, *, rerun: bool = False) -> AnsweredQuestion: ...

    def is_corpus_file(self, path: Path) -> bool: ...


SESSION_KEY: pytest.StashKey[ItemSession] = pytest.StashKey()
