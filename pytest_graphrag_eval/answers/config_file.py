"""The answers config file: ours (`AnswerSettings` options) or graphrag-eval 6.x's, translated.

The plugin and `run_evaluation` both read it through `load_answers_config`, so they agree. A
graphrag-eval file is checked by graphrag-eval's rules for what must be present, so a file it
rejects is rejected here too, naming the file and key. Keys without effect here are listed in a
`ConfigurationWarning`, never dropped in silence; what an OpenAI-compatible client cannot run is a
`ConfigurationError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers.prompts import correctness_prompt
from pytest_graphrag_eval.answers.settings import AnswerSettings, CustomMetric, OutputField, boolean_option
from pytest_graphrag_eval.corpus.input_files import configuration_error
from pytest_graphrag_eval.corpus.yaml_lines import load_yaml_with_lines, to_plain
from pytest_graphrag_eval.errors import ConfigurationError, ConfigurationWarning
from pytest_graphrag_eval.report_model import HUGE_INTEGER, is_huge_integer

SECTIONS = ("llm", "custom_evaluations", "answer_correctness", "answer_relevance")
CUSTOM_INPUTS = ("question", "reference_answer", "reference_steps", "actual_answer", "actual_steps")
CUSTOM_KEYS = ("name", "inputs", "instructions", "outputs", "steps_name", "steps_keys")
CUSTOM_STEPS_KEYS = ("args", "output")
# LiteLLM provider names whose endpoint speaks the OpenAI API; the others (anthropic, ollama, ...) do not.
OPENAI_PROVIDERS = ("openai", "custom_openai", "hosted_vllm", "lm_studio")
AZURE_PROVIDER = "azure"
# Model-section keys besides provider/model that become client settings; the rest is reported as ignored.
ENDPOINT_KEYS = ("base_url", "api_base", "api_key", "api_version")
CLIENT_KEYS = {"timeout": "timeout", "max_retries": "max_retries", "num_retries": "max_retries"}


_OUR_OPTIONS = frozenset(AnswerSettings.__dataclass_fields__) - {"correctness_template"}


@dataclass(frozen=True)
class AnswersConfig:
    """A config file's answer options (`AnswerSettings.from_mapping` input), judge-client overrides (out
    of repr: they may hold an API key) and, for a graphrag-eval file, its keys without effect here."""

    path: Path
    answers: Mapping[str, Any]
    llm: Mapping[str, Any] = field(default_factory=dict, repr=False)
    ignored: tuple[str, ...] = ()


def load_answers_config(path: Path) -> AnswersConfig:
    """Read `path` as our answers config or a graphrag-eval one (told apart by keys); mixed is an error."""
    path = Path(path)
    # The bounded loader: size cap, encodings, alias bombs and repeated keys are refused by name.
    data = to_plain(load_yaml_with_lines(path, error_type=configuration_error, what="the answers config"))
    if not isinstance(data, Mapping):
        raise ConfigurationError(
            f"{path}: the answers config must be a YAML mapping, got {type(data).__name__}"
        )
    if not is_graphrag_eval_config(data):
        return AnswersConfig(path, dict(data))
    ours = sorted(str(key) for key in data if str(key).replace("-", "_") in _OUR_OPTIONS)
    if ours:
        sections = ", ".join(key for key in SECTIONS if key in data)
        raise ConfigurationError(
            f"{path}: mixes graphrag-eval sections ({sections}) with pytest-graphrag-eval answers "
            f"options ({', '.join(ours)}); use one form per file"
        )
    config = translate(data, path)
    if config.ignored:
        warnings.warn(
            ConfigurationWarning(
                f"{path}: graphrag-eval config keys without effect in pytest-graphrag-eval: "
                + "; ".join(config.ignored)
            ),
            stacklevel=1,
        )
    return config


def is_graphrag_eval_config(data: object) -> bool:
    """True for a mapping with at least one of graphrag-eval's config sections."""
    return isinstance(data, Mapping) and any(section in data for section in SECTIONS)


def translate(data: Mapping[str, object], source: str | Path) -> AnswersConfig:
    """Map graphrag-eval's config sections onto our settings, checking them as graphrag-eval does."""
    return _Translator(str(source)).run(data)


class _Translator:
    """One translation: collects the mapped values and the ignored keys while walking the file."""

    def __init__(self, source: str):
        self.source = source
        self.answers: dict[str, Any] = {}
        self.llm: dict[str, Any] = {}
        self.ignored: list[str] = []

    def fail(self, key: str, message: str) -> ConfigurationError:
        return ConfigurationError(f"{self.source}: {key}: {message}")

    def run(self, data: Mapping[str, object]) -> AnswersConfig:
        for key in data:
            if key not in SECTIONS:
                self.ignored.append(f"{key} (not a graphrag-eval config section)")
        has_llm, has_embedding = self._llm(data.get("llm"))
        correctness = self._switch(data, "answer_correctness", ("enabled", "prompt"))
        relevance = self._switch(data, "answer_relevance", ("enabled",))
        customs = self._custom_evaluations(data.get("custom_evaluations"))
        # graphrag-eval's defaults: correctness on whenever an LLM is configured, relevance whenever
        # an embedding model is; switching one on explicitly without its model is an error.
        correctness_on = has_llm if correctness is None else self._enabled(correctness, "answer_correctness")
        relevance_on = has_embedding if relevance is None else self._enabled(relevance, "answer_relevance")
        if customs and not has_llm:
            raise self.fail("custom_evaluations", "needs the llm section (an LLM judges them)")
        if correctness_on and not has_llm:
            raise self.fail("answer_correctness", "enabled, but there is no llm section to judge it")
        if relevance_on and not has_embedding:
            raise self.fail("answer_relevance", "enabled, but the llm section has no embedding model")
        self.answers["judge"] = "llm" if correctness_on else "none"
        self.answers["relevance"] = relevance_on
        self.answers["retrieval_judges"] = has_llm
        if correctness is not None and correctness.get("prompt") is not None:
            self.answers["correctness_prompt"] = self._correctness_prompt(correctness["prompt"])
        if customs:
            self.answers["custom_metrics"] = customs
        return AnswersConfig(Path(self.source), self.answers, self.llm, tuple(self.ignored))

    def _enabled(self, section: Mapping[str, object], where: str) -> bool:
        return boolean_option(section.get("enabled", True), f"{self.source}: {where}.enabled")

    def _correctness_prompt(self, prompt: object) -> str:
        """The inline prompt, checked now so that a bad one names this file and key."""
        if not isinstance(prompt, str):
            raise self.fail("answer_correctness.prompt", "must be the prompt text")
        try:
            correctness_prompt(prompt, "answer_correctness.prompt")
        except ConfigurationError as error:
            raise ConfigurationError(f"{self.source}: {error}") from None
        return prompt

    def _llm(self, raw: object) -> tuple[bool, bool]:
        """Map the llm section; returns (an LLM is configured, an embedding model is)."""
        if raw is None:
            return False, False
        if not isinstance(raw, Mapping):
            raise self.fail("llm", "must be a mapping with generation (and optionally embedding)")
        for key in raw:
            if key not in ("generation", "embedding"):
                self.ignored.append(f"llm.{key} (graphrag-eval reads only generation and embedding)")
        generation = raw.get("generation")
        if not isinstance(generation, Mapping):
            raise self.fail("llm.generation", "required: a mapping with provider and model")
        endpoint = self._model("llm.generation", generation)
        self.answers["judge_model"] = self.llm["model"] = endpoint.pop("model")
        self._generation_options(generation)
        self.llm.update(endpoint)
        embedding = raw.get("embedding")
        if embedding is None:
            return True, False
        if not isinstance(embedding, Mapping):
            raise self.fail("llm.embedding", "must be a mapping with provider and model")
        embedding_endpoint = self._model("llm.embedding", embedding)
        self.answers["embedding_model"] = self.llm["embedding_model"] = embedding_endpoint.pop("model")
        self._same_endpoint(endpoint, embedding_endpoint)
        for key in ("timeout", "max_retries"):
            if key in embedding_endpoint and embedding_endpoint[key] != endpoint.get(key):
                self.ignored.append(f"llm.embedding.{key} (the judge client uses llm.generation's for both)")
        return True, True

    def _same_endpoint(self, generation: Mapping[str, object], embedding: Mapping[str, object]) -> None:
        """The judge client has one endpoint: chat and embeddings must not point to different ones."""
        for key in ("base_url", "azure_endpoint", "api_version", "api_key"):
            if key == "api_key" and (key not in generation or key not in embedding):
                continue  # a key given once (or read from the environment) serves both
            if generation.get(key) != embedding.get(key):
                shown = "base_url" if key == "azure_endpoint" else key
                raise self.fail(
                    f"llm.embedding.{shown}",
                    f"differs from llm.generation.{shown}: the judge client sends chat and embedding "
                    "requests to one endpoint",
                )

    def _model(self, where: str, raw: Mapping[str, object]) -> dict[str, object]:
        """Provider, model and endpoint keys of a generation or embedding section, as LLMSettings fields."""
        provider = _text(raw.get("provider"), self, f"{where}.provider")
        model = _text(raw.get("model"), self, f"{where}.model")
        if provider not in (*OPENAI_PROVIDERS, AZURE_PROVIDER):
            raise self.fail(
                f"{where}.provider",
                f"{provider!r} is not supported: the judge client speaks the OpenAI API; use openai "
                "(with base_url for an OpenAI-compatible server), azure, or one of "
                + ", ".join(OPENAI_PROVIDERS[1:]),
            )
        base_url = raw.get("base_url", raw.get("api_base"))
        if "base_url" in raw and "api_base" in raw and raw["base_url"] != raw["api_base"]:
            raise self.fail(f"{where}.api_base", "differs from base_url; give one of them")
        values: dict[str, object] = {"model": model}
        if provider == AZURE_PROVIDER:
            if base_url is None:
                raise self.fail(f"{where}.base_url", "the azure provider needs the endpoint URL")
            values["azure_endpoint"] = _text(base_url, self, f"{where}.base_url")
        elif base_url is not None:
            values["base_url"] = _text(base_url, self, f"{where}.base_url")
        elif provider != "openai":
            raise self.fail(f"{where}.base_url", f"the {provider} provider needs the server's base_url")
        for key in ("api_key", "api_version"):
            if raw.get(key) is not None:
                values[key] = _text(raw[key], self, f"{where}.{key}")
        for key, target in CLIENT_KEYS.items():
            if raw.get(key) is not None:
                values[target] = _number(raw[key], self, f"{where}.{key}", integer=target == "max_retries")
        known = {"provider", "model", *ENDPOINT_KEYS, *CLIENT_KEYS, "temperature", "max_tokens"}
        if where == "llm.embedding":
            known -= {"temperature", "max_tokens"}
        for key in raw:
            if key not in known:
                self.ignored.append(f"{where}.{key} (a LiteLLM parameter the judge client does not send)")
        return values

    def _generation_options(self, generation: Mapping[str, object]) -> None:
        temperature = generation.get("temperature")
        if temperature is not None:
            value = _number(temperature, self, "llm.generation.temperature")
            if not 0.0 <= value <= 2.0:
                raise self.fail("llm.generation.temperature", f"must be from 0.0 to 2.0, got {value}")
            self.answers["temperature"] = value
        max_tokens = generation.get("max_tokens")
        if max_tokens is not None:
            value = _number(max_tokens, self, "llm.generation.max_tokens", integer=True)
            if value < 1:
                raise self.fail("llm.generation.max_tokens", f"must be at least 1, got {value}")
            self.llm["max_tokens"] = value

    def _switch(
        self, data: Mapping[str, object], section: str, keys: tuple[str, ...]
    ) -> Mapping[str, object] | None:
        raw = data.get(section)
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise self.fail(section, f"must be a mapping with {' and '.join(keys)}")
        for key in raw:
            if key not in keys:
                self.ignored.append(f"{section}.{key} (graphrag-eval reads only {', '.join(keys)})")
        return raw

    def _custom_evaluations(self, raw: object) -> list[CustomMetric]:
        if raw is None:
            return []
        if not isinstance(raw, list) or not raw:
            raise self.fail("custom_evaluations", "must be a non-empty list of evaluations")
        return [self._custom(index, item) for index, item in enumerate(raw)]

    def _custom(self, index: int, raw: object) -> CustomMetric:
        where = f"custom_evaluations[{index}]"
        if not isinstance(raw, Mapping):
            raise self.fail(where, "must be a mapping with name, inputs, instructions and outputs")
        unknown = sorted(str(key) for key in raw if key not in CUSTOM_KEYS)
        if unknown:
            raise self.fail(where, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(CUSTOM_KEYS)}")
        name = _text(raw.get("name"), self, f"{where}.name")
        where = f"custom_evaluations[{index}] ({name})"
        inputs = raw.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise self.fail(f"{where}.inputs", f"must be a non-empty list of: {', '.join(CUSTOM_INPUTS)}")
        wrong = [str(item) for item in inputs if item not in CUSTOM_INPUTS]
        if wrong:
            raise self.fail(
                f"{where}.inputs",
                f"unknown input(s) {', '.join(wrong)}; choose from {', '.join(CUSTOM_INPUTS)}",
            )
        instructions = _text(raw.get("instructions"), self, f"{where}.instructions", blank=True)
        outputs = raw.get("outputs")
        if not isinstance(outputs, Mapping) or not all(isinstance(value, str) for value in outputs.values()):
            raise self.fail(f"{where}.outputs", "must map each output name to its description (a text)")
        steps_name, steps_keys = self._custom_steps(where, raw, inputs)
        try:
            return CustomMetric(
                name=name,
                inputs=tuple(dict.fromkeys("steps" if item == "actual_steps" else item for item in inputs)),
                instructions=instructions,
                outputs=tuple(
                    OutputField(name=str(key), type="value", description=value)
                    for key, value in outputs.items()
                ),
                steps_name=steps_name,
                prefix_outputs=False,
                steps_keys=steps_keys,
            )
        except ConfigurationError as error:
            raise self.fail(where, str(error)) from None

    def _custom_steps(
        self, where: str, raw: Mapping[str, object], inputs: list[object]
    ) -> tuple[str | None, tuple[str, ...]]:
        """steps_name and steps_keys: required when steps are an input, as graphrag-eval requires."""
        steps_name = raw.get("steps_name")
        keys = raw.get("steps_keys")
        if steps_name is not None:
            steps_name = _text(steps_name, self, f"{where}.steps_name")
        if keys is not None and (
            not isinstance(keys, list) or not keys or any(key not in CUSTOM_STEPS_KEYS for key in keys)
        ):
            raise self.fail(
                f"{where}.steps_keys", f"must be a non-empty list of {' and/or '.join(CUSTOM_STEPS_KEYS)}"
            )
        if {"reference_steps", "actual_steps"} & set(inputs):
            for key, value in (("steps_name", steps_name), ("steps_keys", keys)):
                if value is None:
                    raise self.fail(
                        f"{where}.{key}", "required when reference_steps or actual_steps is an input"
                    )
        return steps_name, tuple(dict.fromkeys(keys or CUSTOM_STEPS_KEYS))


def _text(value: object, translator: _Translator, key: str, *, blank: bool = False) -> str:
    if not isinstance(value, str) or (not blank and not value.strip()):
        raise translator.fail(key, "required: a text" if value is None else f"must be a text, got {value!r}")
    return value


def _number(value: object, translator: _Translator, key: str, *, integer: bool = False) -> float:
    """A float, or an int with `integer`."""
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        shown = HUGE_INTEGER if is_huge_integer(value) else repr(value)
        raise translator.fail(key, f"must be a number, got {shown}") from None
    if integer:
        if not number.is_integer():
            raise translator.fail(key, f"must be a whole number, got {value!r}")
        return int(number)
    return number
