"""The `erag` settings of a corpus (docs/retrieval.md), validated and built into a generator and a
metric. Paths are relative to the working directory."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.metrics.measures import parse_measures
from pytest_graphrag_eval.retrieval.erag import CONTINUOUS_MEASURES, DEFAULT_CONCURRENCY
from pytest_graphrag_eval.retrieval.erag_components import (
    NAMED_METRICS,
    LLMJudgeMetric,
    ModelGenerator,
    SingleInput,
)

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.judge import Judge

DEFAULT_METRICS = ("P", "success")
CONTINUOUS_NAMED = ("token_f1", "rouge_l", "llm_judge")
_KEYS = frozenset({"generator", "metric", "judge", "metrics", "concurrency"})
_MODEL_KEYS = frozenset({"model", "prompt", "prompt_file", "temperature"})


@dataclass(frozen=True)
class ERagSetup:
    """What one eRAG run per question needs, built once per configuration."""

    generator: object  # a SingleInput, a batched callable or a ModelGenerator (erag.erag_within checks)
    metric: object
    metrics: tuple[str, ...]
    concurrency: int

    @property
    def uses_llm(self) -> bool:
        return isinstance(self.generator, ModelGenerator) or isinstance(self.metric, LLMJudgeMetric)


def build_erag(config: object, judge: Judge | None) -> ERagSetup:
    """Validate the `erag` settings; `judge` is the LLM judge (None when no LLM is configured)."""
    if not isinstance(config, Mapping):
        raise ConfigurationError("erag settings must be a mapping (generator, metric, metrics, ...)")
    unknown = sorted(set(config) - _KEYS)
    if unknown:
        raise ConfigurationError(
            f"erag settings: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}"
        )
    if "generator" not in config:
        raise ConfigurationError("erag settings: 'generator' is missing (a model or a Python callable)")
    metrics = _metrics(config.get("metrics", list(DEFAULT_METRICS)))
    metric_name = config.get("metric", "token_f1")
    generator = _generator(config["generator"], judge)
    metric = _metric(metric_name, config.get("judge"), judge)
    if metric_name in CONTINUOUS_NAMED:
        unsupported = [name for name in metrics if not name.startswith(CONTINUOUS_MEASURES)]
        if unsupported:
            raise ConfigurationError(
                f"erag settings: metric {metric_name} gives labels between 0 and 1, for which eRAG "
                f"defines only P and success; not {', '.join(unsupported)} "
                "(use exact_match or contains_any for those)"
            )
    concurrency = config.get("concurrency", DEFAULT_CONCURRENCY)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(f"erag settings: 'concurrency' must be an integer >= 1, got {concurrency!r}")
    return ERagSetup(generator, metric, metrics, concurrency)


def erag_uses_llm(config: object) -> bool:
    """Whether `erag` settings name a model generator or the LLM-judge metric (so need a judge)."""
    if not isinstance(config, Mapping):
        return False
    generator = config.get("generator")
    model_generator = isinstance(generator, Mapping) and "callable" not in generator
    return model_generator or config.get("metric") == "llm_judge"


def _metrics(value: object) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(name, str) for name in names):
        raise ConfigurationError("erag settings: 'metrics' must be a non-empty list of metric names")
    parse_measures(names)
    return tuple(names)


def _generator(spec: object, judge: Judge | None) -> object:
    if isinstance(spec, str):
        return SingleInput(load_callable(spec, "generator"))
    if isinstance(spec, Mapping) and "callable" in spec:
        extra = sorted(set(spec) - {"callable", "batched"})
        batched = spec.get("batched", False)
        if extra or not isinstance(batched, bool):
            raise ConfigurationError(
                "erag settings: a callable generator takes only 'callable' and 'batched: true/false'"
            )
        function = load_callable(spec["callable"], "generator")
        return function if batched else SingleInput(function)
    if isinstance(spec, Mapping):
        return ModelGenerator(_client(judge, "generator"), **_model_options(spec, "generator"))
    raise ConfigurationError(
        "erag settings: 'generator' must be 'module:function' or a mapping with 'model' "
        "(and optionally 'prompt' or 'prompt_file')"
    )


def _metric(name: object, judge_spec: object, judge: Judge | None) -> object:
    if not isinstance(name, str):
        raise ConfigurationError("erag settings: 'metric' must be a metric name or 'module:function'")
    if judge_spec is not None and name != "llm_judge":
        raise ConfigurationError("erag settings: 'judge' only applies with metric: llm_judge")
    if name == "llm_judge":
        spec = judge_spec if judge_spec is not None else {}
        if not isinstance(spec, Mapping):
            raise ConfigurationError("erag settings: 'judge' must be a mapping (model, prompt, prompt_file)")
        options = _model_options(spec, "judge")
        options.pop("temperature", None)
        return LLMJudgeMetric(_client(judge, "llm_judge metric"), **options)
    if name in NAMED_METRICS:
        return SingleInput(NAMED_METRICS[name])
    if ":" in name:
        return SingleInput(load_callable(name, "metric"))
    known = ", ".join([*NAMED_METRICS, "llm_judge"])
    raise ConfigurationError(f"erag settings: unknown metric {name!r}; known: {known}, or 'module:function'")


def _model_options(spec: Mapping[str, object], role: str) -> dict[str, Any]:
    unknown = sorted(set(spec) - _MODEL_KEYS)
    if unknown:
        raise ConfigurationError(f"erag settings: {role}: unknown key(s) {', '.join(unknown)}")
    for key in ("model", "prompt", "prompt_file"):
        if key in spec and not isinstance(spec[key], str):
            raise ConfigurationError(f"erag settings: {role}: '{key}' must be text")
    return dict(spec)


def _client(judge: Judge | None, role: str) -> Judge:
    if judge is None:
        raise ConfigurationError(
            f"erag settings: the {role} needs an LLM, but no judge client is configured "
            "(set OPENAI_API_KEY and, for other endpoints, OPENAI_BASE_URL)"
        )
    return judge


def load_callable(spec: object, role: str) -> Callable[..., object]:
    """Import `package.module:attribute`; a bad path is a configuration error naming it."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ConfigurationError(f"erag settings: {role} {spec!r} must be written 'package.module:function'")
    module_name, attribute = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigurationError(
            f"erag settings: {role} {spec!r}: cannot import {module_name}: {error}"
        ) from None
    function: object = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigurationError(
            f"erag settings: {role} {spec!r}: {module_name} has no callable {attribute!r}"
        )
    return function
