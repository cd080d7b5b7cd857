"""The scorers and each question's scoring context for one process's run, built once, so that a corpus
file's bad setting is a `ConfigurationError` naming it before any question runs. The options'
`tool_names` win over a corpus file's, tool by tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphrag_eval.adapters.tool_names import tool_names_setting
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.evaluation import make_context
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.scorer_factory import build_scorers
from pytest_graphrag_eval.scoring import Scorer, ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers.settings import AnswerSettings
    from pytest_graphrag_eval.llm.judge import Judge


@dataclass(frozen=True)
class ScoringSetup:
    """The run's scorers, and the context of each question (by id) from its corpus file."""

    scorers: list[Scorer]
    contexts: Mapping[str, ScoringContext]

    def context_for(self, question: Question) -> ScoringContext:
        return self.contexts[question.question_id]


def scoring_setup(
    answers: AnswerSettings,
    judge: Judge | None,
    steps_scope: str,
    tool_names: Mapping[str, str],
    rules: Mapping[Path, CorpusRules],
    corpora: Mapping[Path, Corpus],
) -> ScoringSetup:
    """Scorers from the resolved answer settings; one context per corpus file, shared by its questions."""
    contexts: dict[str, ScoringContext] = {}
    for path, corpus in rules.items():
        source = f"{corpus.file}: settings"
        scoring = dict(corpus.scoring)
        scoring["tool_names"] = {**tool_names_setting(scoring.get("tool_names"), source), **tool_names}
        context = make_context(steps_scope, judge, scoring, source=source)
        contexts.update(dict.fromkeys(corpora[path].positions, context))
    return ScoringSetup(build_scorers(answers, judge), contexts)
