"""The plugin's settings turned into the inputs of the one scorer factory, and its judge client.

Kept apart from the hooks: the answer and client settings are resolved from the
options and the answers config file, then `scorer_factory.build_scorers` (the
library's too) builds the scorers, with one shared judge client whenever any
of them needs an LLM.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval import scorer_factory
from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.evaluation import make_context
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.scorer_factory import needs_judge
from pytest_graphrag_eval.scoring import Scorer, ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers import AnswerSettings
    from pytest_graphrag_eval.answers.config_file import AnswersConfig
    from pytest_graphrag_eval.llm import LLMSettings


def answer_settings(settings: PluginSettings, config: AnswersConfig | None = None) -> AnswerSettings:
    """The answer-metric part of the plugin settings: the answers config file, then options over it.

    The file may be ours or a graphrag-eval evaluation config (see `answers.config_file`).
    """
    from pytest_graphrag_eval.answers import AnswerSettings
    from pytest_graphrag_eval.answers.config_file import load_answers_config

    if config is None and settings.answers_config is not None:
        config = load_answers_config(settings.answers_config)
    raw: dict[str, Any] = dict(config.answers) if config is not None else {}
    raw["judge"] = settings.judge or raw.get("judge", "none")
    raw["relevance"] = settings.relevance or raw.get("relevance", False)
    if settings.judge_repeats is not None:
        raw["repeats"] = settings.judge_repeats  # the option wins over the file, 1 included
    for key, value in (
        ("correctness_prompt_file", settings.correctness_prompt),
        ("judge_model", settings.judge_model),
        ("embedding_model", settings.embedding_model),
    ):
        if value is not None:
            raw[key] = value
    if settings.correctness_prompt is not None:
        raw.pop("correctness_prompt", None)  # the option's file replaces the config's inline prompt
    base_dir = settings.answers_config.parent if settings.answers_config else None
    source = str(settings.answers_config) if settings.answers_config else "graphrag options"
    return AnswerSettings.from_mapping(raw, base_dir=base_dir, source=source)


def llm_settings(
    settings: PluginSettings, answers: AnswerSettings, config: AnswersConfig | None = None
) -> LLMSettings:
    """Client settings: the environment, then a graphrag-eval config's llm section, then the options."""
    from pytest_graphrag_eval.llm import LLMSettings

    overrides: dict[str, Any] = dict(config.llm) if config is not None else {}
    overrides.update(
        cache_dir=settings.cache_dir,
        use_cache=settings.use_cache,
        cache_only=settings.cache_only,
        dry_run=settings.dry_run,
        max_cost_usd=settings.max_cost,
        max_calls=settings.max_calls,
    )
    if answers.judge_model:
        overrides["model"] = answers.judge_model
    if answers.embedding_model:
        overrides["embedding_model"] = answers.embedding_model
    if settings.llm_concurrency:
        overrides["concurrency"] = settings.llm_concurrency
    return LLMSettings.from_env(**overrides)


def check_judge_settings(settings: PluginSettings) -> None:
    """Build the answer settings and, when they need an LLM, a judge client (no request is sent).

    Run at start-up so a bad answers config, a missing API key or an unusable cache folder is a
    usage error in every process, including an xdist controller, which collects nothing itself.
    """
    from pytest_graphrag_eval.answers.config_file import load_answers_config

    config = load_answers_config(settings.answers_config) if settings.answers_config is not None else None
    answers = answer_settings(settings, config)
    if answers.needs_llm:  # the LLM stack is imported only when a judge will use it
        from pytest_graphrag_eval.llm import JudgeClient

        JudgeClient(llm_settings(settings, answers, config))


def build_scorers(
    settings: PluginSettings, corpora: Iterable[Corpus] = ()
) -> tuple[list[Scorer], ScoringContext, Callable[[], Coroutine[Any, Any, None]] | None]:
    """Scorers, context and an async close callback for the judge client (None without one).

    The scorers are `scorer_factory.build_scorers`' for the resolved answer settings and every
    corpus' `erag` settings (checked now, so a bad one is a usage error before any question runs).
    The LLM modules are imported only when a judge is needed, so runs without one load quickly.
    """
    from pytest_graphrag_eval.answers.config_file import load_answers_config

    config = load_answers_config(settings.answers_config) if settings.answers_config else None
    answers = answer_settings(settings, config)
    erag_configs = {str(c.file): c.settings["erag"] for c in corpora if c.settings.get("erag") is not None}
    client = None
    if needs_judge(answers, erag_configs.values()):
        from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when a judge is needed

        client = JudgeClient(llm_settings(settings, answers, config))
    scorers = scorer_factory.build_scorers(answers, client, erag_configs)
    context = make_context(settings.steps_scope, judge=client)
    return scorers, context, (client.aclose if client is not None else None)
