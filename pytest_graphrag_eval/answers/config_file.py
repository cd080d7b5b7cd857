"""The answers config file: ours (`AnswerSettings` options) or graphrag-eval 6.x's, translated.

The plugin and `run_evaluation` both read it through `load_answers_config`, so they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers.graphrag_eval_config import (
    SECTIONS,
    is_graphrag_eval_config,
    read_yaml_mapping,
    translate,
)
from pytest_graphrag_eval.answers.settings import AnswerSettings
from pytest_graphrag_eval.errors import ConfigurationError


@dataclass(frozen=True)
class AnswersConfig:
    """A config file's answer options (`AnswerSettings.from_mapping` input) and judge-client overrides."""

    path: Path
    answers: Mapping[str, Any]
    llm: Mapping[str, Any] = field(default_factory=dict, repr=False)


def load_answers_config(path: Path) -> AnswersConfig:
    """Read `path` as our answers config or a graphrag-eval one (told apart by keys); mixed is an error."""
    path = Path(path)
    data = read_yaml_mapping(path, "answers config")
    if not is_graphrag_eval_config(data):
        return AnswersConfig(path, dict(data))
    ours = sorted(str(key) for key in data if str(key).replace("-", "_") in _OUR_OPTIONS)
    if ours:
        sections = ", ".join(key for key in SECTIONS if key in data)
        raise ConfigurationError(
            f"{path}: mixes graphrag-eval sections ({sections}) with pytest-graphrag-eval answers "
            f"options ({', '.join(ours)}); use one form per file"
        )
    translated = translate(data, str(path))
    translated.warn_ignored()
    return AnswersConfig(path, translated.answers, translated.llm)


_OUR_OPTIONS = frozenset(AnswerSettings.__dataclass_fields__) - {"correctness_template"}
