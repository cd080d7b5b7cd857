"""The judge configuration of a run (answer metrics and judge client), by one precedence rule.

Option layers in order, then the answers config file, the caller's defaults, the environment and
built-in defaults; the plugin and `run_evaluation` both resolve through here, so a file means one thing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers.config_file import load_answers_config
from pytest_graphrag_eval.answers.settings import AnswerSettings
from pytest_graphrag_eval.llm.settings import LLMSettings

# JudgeOptions field -> AnswerSettings option name; the other fields are LLMSettings fields.
ANSWER_FILE_KEYS = {
    "judge": "judge",
    "judge_model": "judge_model",
    "embedding_model": "embedding_model",
    "relevance": "relevance",
    "repeats": "repeats",
    "correctness_prompt": "correctness_prompt_file",
}


@dataclass(frozen=True)
class JudgeOptions:
    """One layer of judge options (the command line, the ini file, a caller's defaults); None is unset."""

    judge: str | None = None
    judge_model: str | None = None
    embedding_model: str | None = None
    relevance: bool | None = None
    repeats: int | None = None
    correctness_prompt: Path | None = None
    concurrency: int | None = None
    cache_dir: Path | None = None
    use_cache: bool | None = None
    cache_only: bool | None = None
    dry_run: bool | None = None
    batch: bool | None = None
    max_cost_usd: float | None = None
    max_calls: int | None = None

    def set_values(self) -> dict[str, Any]:
        """The options this layer sets."""
        return {name: value for name, value in vars(self).items() if value is not None}


@dataclass(frozen=True)
class JudgeSettings:
    """The resolved answer-metric settings and judge-client settings of one run."""

    answers: AnswerSettings
    llm: LLMSettings


def first_set(layers: Sequence[JudgeOptions]) -> JudgeOptions:
    """Per option, the value of the first layer that sets it."""
    merged: dict[str, Any] = {}
    for layer in reversed(layers):
        merged.update(layer.set_values())
    return JudgeOptions(**merged)


def resolve_judge_settings(
    layers: Sequence[JudgeOptions],
    config_path: Path | None = None,
    *,
    defaults: JudgeOptions = JudgeOptions(),
    environ: Mapping[str, str] = os.environ,
) -> JudgeSettings:
    """Options over the config file over `defaults` over the environment; a judge or embedding model from
    any layer is the client's model. A bad config file is a `ConfigurationError` naming it."""
    config = load_answers_config(config_path) if config_path is not None else None
    options, fallback = first_set(layers).set_values(), defaults.set_values()
    raw: dict[str, Any] = {
        ANSWER_FILE_KEYS[name]: value for name, value in fallback.items() if name in ANSWER_FILE_KEYS
    }
    raw.update(config.answers if config is not None else {})
    raw.update({ANSWER_FILE_KEYS[name]: value for name, value in options.items() if name in ANSWER_FILE_KEYS})
    if "correctness_prompt" in options:
        raw.pop("correctness_prompt", None)  # the option's file replaces the config's inline prompt
    answers = AnswerSettings.from_mapping(
        raw,
        base_dir=config.path.parent if config is not None else None,
        source=str(config.path) if config is not None else "graphrag options",
    )
    client: dict[str, Any] = {name: value for name, value in fallback.items() if name not in ANSWER_FILE_KEYS}
    client.update(config.llm if config is not None else {})
    client.update({name: value for name, value in options.items() if name not in ANSWER_FILE_KEYS})
    if answers.judge_model:
        client["model"] = answers.judge_model
    if answers.embedding_model:
        client["embedding_model"] = answers.embedding_model
    return JudgeSettings(answers, LLMSettings.from_env(environ, **client))
