"""Build the scorers, scoring context and judge client a plugin run uses.

Kept apart from the hooks so the wiring from settings to scorers can be read
(and tested) in one place: deterministic scorers always, answer scorers by
`--graphrag-judge`, eRAG by each corpus' `erag:` settings, and one shared judge
client whenever any of them needs an LLM.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.evaluation import default_scorers, make_context
from pytest_graphrag_eval.plugin.settings import PluginSettings
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
        batch=settings.judge_batch,
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


def erag_uses_llm(config: Any) -> bool:
    """Whether a corpus' `erag:` settings name a model generator or the LLM-judge metric."""
    if not isinstance(config, Mapping):
        return False
    generator = config.get("generator")
    model_generator = isinstance(generator, Mapping) and "callable" not in generator
    return model_generator or config.get("metric") == "llm_judge"


def build_scorers(
    settings: PluginSettings, corpora: Iterable[Corpus] = ()
) -> tuple[list[Scorer], ScoringContext, Callable[[], Coroutine[Any, Any, None]] | None]:
    """Scorers, context and an async close callback for the judge client (None without one).

    Answer, eRAG and LLM modules are imported here, not at module level, so the
    plugin loads quickly in runs that configure no judge. Every corpus' eRAG
    settings are validated now, so a bad one is a usage error before any question runs.
    """
    from pytest_graphrag_eval.answers import build_answer_scorers
    from pytest_graphrag_eval.answers.config_file import load_answers_config
    from pytest_graphrag_eval.retrieval.erag_config import build_erag

    corpora = list(corpora)
    config = load_answers_config(settings.answers_config) if settings.answers_config else None
    answers = answer_settings(settings, config)
    client = None
    if answers.needs_llm or any(erag_uses_llm(c.settings.get("erag")) for c in corpora):
        from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when a judge is needed

        client = JudgeClient(llm_settings(settings, answers, config))
    for corpus in corpora:
        if corpus.settings.get("erag") is not None:
            try:
                build_erag(corpus.settings["erag"], client)
            except ConfigurationError as error:
                raise ConfigurationError(f"{corpus.file}: {error}") from None
    scorers = [*default_scorers(), *build_answer_scorers(answers, client)]
    context = make_context(settings.steps_scope, judge=client)
    return scorers, context, (client.aclose if client is not None else None)
