"""The scorers and judge client a config file asks for, for the library's `run_evaluation`.

The plugin builds the same from its options (scorers_factory.py); here the one
input is the config file (ours or graphrag-eval's), with the judge's endpoint
and key from the environment unless the file names them, as graphrag-eval does.
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
    from pytest_graphrag_eval.answers.config_file import load_answers_config
    from pytest_graphrag_eval.evaluation import default_scorers
    from pytest_graphrag_eval.llm import JudgeClient, LLMSettings

    config = load_answers_config(path)
    answers = config.answer_settings()
    owns_judge = judge is None and answers.needs_llm
    if owns_judge:
        overrides = dict(config.llm)
        if answers.judge_model:
            overrides["model"] = answers.judge_model
        if answers.embedding_model:
            overrides["embedding_model"] = answers.embedding_model
        judge = JudgeClient(LLMSettings.from_env(**overrides))
    scorers = [*default_scorers(), *build_answer_scorers(answers, judge)]
    return ConfiguredScorers(scorers, judge, owns_judge)
