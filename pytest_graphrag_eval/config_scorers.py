"""The scorers and judge client a config file asks for, for the library's `run_evaluation`.

The plugin builds the same from its options (scorers_factory.py); here the one
input is the config file (ours or graphrag-eval's), resolved by the plugin's
precedence rule (`answers.judge_settings`) with no option layers: the judge's
endpoint and key come from the environment unless the file names them, as
graphrag-eval does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.scoring import Scorer


@dataclass
class ConfiguredScorers:
    """Scorers to run, the judge they share (None without LLM metrics), and whether to close it after."""

    scorers: list[Scorer]
    judge: Any
    owns_judge: bool


def scorers_from_config(path: Path, judge: Any = None) -> ConfiguredScorers:
    """Default scorers plus the answer metrics `path` configures; builds a JudgeClient when one is needed."""
    from pytest_graphrag_eval.answers import build_answer_scorers
    from pytest_graphrag_eval.answers.judge_settings import resolve_judge_settings
    from pytest_graphrag_eval.evaluation import default_scorers
    from pytest_graphrag_eval.llm import JudgeClient

    resolved = resolve_judge_settings((), path)  # the plugin's rule, with no option layers
    owns_judge = judge is None and resolved.answers.needs_llm
    if owns_judge:
        judge = JudgeClient(resolved.llm)
    scorers = [*default_scorers(), *build_answer_scorers(resolved.answers, judge)]
    return ConfiguredScorers(scorers, judge, owns_judge)
