"""Build the scorers, scoring context and judge client a plugin run uses.

Kept apart from the hooks so the wiring from settings to scorers can be read
(and tested) in one place: deterministic scorers always, answer scorers by
`--graphrag-judge`, and one shared judge client when an LLM is involved.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .evaluation import default_scorers, make_context
from .scoring import Scorer, ScoringContext
from .settings import PluginSettings

if TYPE_CHECKING:
    from .answers import AnswerSettings
    from .llm import LLMSettings


def answer_settings(settings: PluginSettings) -> AnswerSettings:
    """The answer-metric part of the plugin settings."""
    from .answers import AnswerSettings

    overrides: dict[str, Any] = {
        "judge": settings.judge,
        "relevance": settings.relevance,
        "repeats": settings.judge_repeats,
        "correctness_prompt_file": settings.correctness_prompt,
    }
    if settings.judge_model:
        overrides["judge_model"] = settings.judge_model
    if settings.embedding_model:
        overrides["embedding_model"] = settings.embedding_model
    return AnswerSettings(**overrides)


def llm_settings(settings: PluginSettings, answers: AnswerSettings) -> LLMSettings:
    """Client settings: endpoint and key from the environment, the rest from the plugin settings."""
    from .llm import LLMSettings

    overrides: dict[str, Any] = {
        "model": answers.judge_model,
        "embedding_model": answers.embedding_model,
        "cache_dir": settings.cache_dir,
        "use_cache": settings.use_cache,
    }
    if settings.llm_concurrency:
        overrides["concurrency"] = settings.llm_concurrency
    return LLMSettings.from_env(**overrides)


def build_scorers(
    settings: PluginSettings,
) -> tuple[list[Scorer], ScoringContext, Callable[[], Awaitable[None]] | None]:
    """Scorers, context and an async close callback for the judge client (None without one).

    Answer and LLM modules are imported here, not at module level, so the plugin
    loads quickly in runs that configure no judge.
    """
    from .answers import build_answer_scorers
    from .llm import JudgeClient

    answers = answer_settings(settings)
    client = JudgeClient(llm_settings(settings, answers)) if answers.needs_llm else None
    scorers = [*default_scorers(), *build_answer_scorers(answers, client)]
    context = make_context(settings.steps_scope, judge=client)
    return scorers, context, (client.aclose if client is not None else None)
