"""AnswerSettings: the one typed configuration of the answer metrics.

Built directly, or with `AnswerSettings.from_mapping` from ini options or a
YAML `answers:` section (strings such as "true" and "3" are accepted there).
Everything is checked when the settings are created, including the
correctness prompt file, so a bad configuration stops the run before the first
judge call with a `ConfigurationError` naming the option or file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers.prompts import PromptTemplate, correctness_template
from pytest_graphrag_eval.corpus.input_files import configuration_error
from pytest_graphrag_eval.corpus.yaml_lines import load_yaml_with_lines, to_plain
from pytest_graphrag_eval.errors import ConfigurationError

JUDGES = ("llm", "lexical", "none")
RELEVANCE_BACKENDS = ("native", "ragas")
OUTPUT_MODES = ("json_schema", "json_object")
INPUT_NAMES = ("question", "reference_answer", "actual_answer", "steps")
FIELD_TYPES = ("number", "integer", "boolean", "text")
RESERVED_FIELDS = frozenset({"error", "judge"})
# First name segments of the keys built-in scorers and the copied response fields use.
RESERVED_PREFIXES = frozenset(
    {"answer", "steps", "retrieval", "question", "reference", "actual", "status", "error"}
    | {"input", "output", "total", "elapsed", "template"}
)
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class OutputField:
    """One declared output of a custom metric: its type and, for numbers, its range."""

    name: str
    type: str = "number"
    description: str = ""
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if not _IDENTIFIER.match(self.name) or self.name in RESERVED_FIELDS:
            raise ConfigurationError(
                f"output field {self.name!r}: use lower-case letters, digits and '_' (not 'error' or 'judge')"
            )
        if self.type not in FIELD_TYPES:
            raise ConfigurationError(
                f"output field {self.name!r}: type must be one of {', '.join(FIELD_TYPES)}"
            )
        has_range = self.minimum is not None or self.maximum is not None
        if has_range and self.type not in ("number", "integer"):
            raise ConfigurationError(f"output field {self.name!r}: only numbers can have min/max")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ConfigurationError(f"output field {self.name!r}: min is greater than max")

    @classmethod
    def from_config(cls, name: str, raw: Any) -> OutputField:
        """`score: number` or `score: {type: number, min: 0, max: 1, description: ...}`."""
        if isinstance(raw, str):
            return cls(name=name, type=raw)
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"output field {name!r}: give a type name or a mapping")
        unknown = set(raw) - {"type", "description", "min", "max"}
        if unknown:
            raise ConfigurationError(
                f"output field {name!r}: unknown key(s) {', '.join(sorted(map(str, unknown)))}"
            )
        return cls(
            name=name,
            type=str(raw.get("type", "number")),
            description=str(raw.get("description", "")),
            minimum=_optional_number(raw.get("min"), f"output field {name!r} min"),
            maximum=_optional_number(raw.get("max"), f"output field {name!r} max"),
        )


@dataclass(frozen=True)
class CustomMetric:
    """A metric the user declares: which inputs the judge sees, what it must do and reply."""

    name: str
    inputs: tuple[str, ...]
    instructions: str
    outputs: tuple[OutputField, ...]
    steps_name: str | None = None

    def __post_init__(self) -> None:
        where = f"custom metric {self.name!r}"
        if not _IDENTIFIER.match(self.name):
            raise ConfigurationError(f"{where}: the name must be lower-case letters, digits and '_'")
        if self.name.split("_")[0] in RESERVED_PREFIXES:
            raise ConfigurationError(
                f"{where}: names starting with {self.name.split('_')[0]!r} are reserved for built-in "
                f"result keys; choose another name (e.g. 'my_{self.name}')"
            )
        if not self.inputs or len(set(self.inputs)) != len(self.inputs):
            raise ConfigurationError(f"{where}: inputs must be a non-empty list without repeats")
        unknown = [name for name in self.inputs if name not in INPUT_NAMES]
        if unknown:
            raise ConfigurationError(
                f"{where}: unknown input(s) {', '.join(unknown)}; choose from {', '.join(INPUT_NAMES)}"
            )
        if not self.instructions.strip():
            raise ConfigurationError(f"{where}: instructions must not be empty")
        names = [output.name for output in self.outputs]
        if not names or len(set(names)) != len(names):
            raise ConfigurationError(f"{where}: outputs must be a non-empty list of distinct fields")
        if self.steps_name is not None and "steps" not in self.inputs:
            raise ConfigurationError(f"{where}: steps_name needs 'steps' among the inputs")

    def result_keys(self) -> list[str]:
        """Every key this metric may write, to check for clashes."""
        return [f"{self.name}_{output.name}" for output in self.outputs] + [
            f"{self.name}_error",
            f"{self.name}_judge",
        ]

    @classmethod
    def from_config(cls, raw: Any) -> CustomMetric:
        if not isinstance(raw, Mapping):
            raise ConfigurationError(
                "each custom metric must be a mapping with name, inputs, instructions, outputs"
            )
        name = str(raw.get("name", ""))
        unknown = set(raw) - {"name", "inputs", "instructions", "outputs", "steps_name"}
        if unknown:
            raise ConfigurationError(
                f"custom metric {name!r}: unknown key(s) {', '.join(sorted(map(str, unknown)))}"
            )
        inputs = raw.get("inputs")
        outputs = raw.get("outputs")
        if not isinstance(inputs, list) or not all(isinstance(item, str) for item in inputs):
            raise ConfigurationError(f"custom metric {name!r}: inputs must be a list of names")
        if not isinstance(outputs, Mapping):
            raise ConfigurationError(f"custom metric {name!r}: outputs must map field names to types")
        steps_name = raw.get("steps_name")
        return cls(
            name=name,
            inputs=tuple(inputs),
            instructions=str(raw.get("instructions") or ""),
            outputs=tuple(OutputField.from_config(str(key), value) for key, value in outputs.items()),
            steps_name=None if steps_name is None else str(steps_name),
        )


@dataclass(frozen=True)
class AnswerSettings:
    """Which answer metrics run and how they are judged.

    judge: "llm" (claims judged by an LLM), "lexical" (no LLM) or "none" (no
    correctness; exact match / token F1 still run). relevance turns on RAGAS
    answer relevance with `relevance_questions` generated questions, computed
    natively or by ragas. repeats > 1 judges every LLM metric that many times
    and reports the mean with `_stdev`, `_min`, `_max`. judge_model and
    embedding_model override the client's models. The correctness prompt
    file (checked even when another judge is chosen, so switching judges
    never hides a broken file) is loaded into `correctness_template`.
    """

    judge: str = "lexical"
    relevance: bool = False
    relevance_backend: str = "native"
    relevance_questions: int = 3
    repeats: int = 1
    correctness_prompt_file: Path | None = None
    custom_metrics: tuple[CustomMetric, ...] = ()
    judge_model: str | None = None
    embedding_model: str | None = None
    output_mode: str = "json_schema"
    correctness_template: PromptTemplate = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _choice("judge", self.judge, JUDGES)
        _choice("relevance_backend", self.relevance_backend, RELEVANCE_BACKENDS)
        _choice("output_mode", self.output_mode, OUTPUT_MODES)
        for name in ("relevance_questions", "repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"answers option {name}: must be a whole number >= 1, got {value!r}")
        for name in ("judge_model", "embedding_model"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigurationError(f"answers option {name}: must be a model name")
        object.__setattr__(self, "correctness_template", correctness_template(self.correctness_prompt_file))
        seen: dict[str, str] = {}
        for metric in self.custom_metrics:
            for key in metric.result_keys():
                if key in seen:
                    raise ConfigurationError(
                        f"custom metric {metric.name!r}: result key {key!r} "
                        f"clashes with custom metric {seen[key]!r}"
                    )
                seen[key] = metric.name

    @property
    def needs_llm(self) -> bool:
        """True when some configured metric needs the judge client."""
        return self.judge == "llm" or self.relevance or bool(self.custom_metrics)

    @classmethod
    def from_mapping(
        cls, raw: Mapping[str, Any], *, base_dir: Path | None = None, source: str = "answers settings"
    ) -> AnswerSettings:
        """Settings from ini/YAML values; relative paths are resolved against `base_dir`.

        `custom_metrics` is a list of metric mappings or the path of a YAML file holding one.
        Keys may use '-' for '_'; unknown keys are an error naming `source`.
        """
        known = {item.name for item in fields(cls) if item.init}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            name = str(key).replace("-", "_")
            if name not in known:
                raise ConfigurationError(
                    f"{source}: unknown answers option {key!r}; known: {', '.join(sorted(known))}"
                )
            if value is None or value == "":
                continue
            values[name] = _convert(name, value, base_dir, source)
        return cls(**values)


def _convert(name: str, value: Any, base_dir: Path | None, source: str) -> Any:
    where = f"{source}: answers option {name}"
    if name == "relevance":
        return _boolean(value, where)
    if name in ("relevance_questions", "repeats"):
        try:
            return int(str(value).strip())
        except ValueError:
            raise ConfigurationError(f"{where}: must be a whole number, got {value!r}") from None
    if name == "correctness_prompt_file":
        return _resolve(value, base_dir)
    if name == "custom_metrics":
        return _custom_metrics(value, base_dir, where)
    return str(value).strip()


def _custom_metrics(value: Any, base_dir: Path | None, where: str) -> tuple[CustomMetric, ...]:
    if isinstance(value, (str, Path)):
        path = _resolve(value, base_dir)
        value = to_plain(
            load_yaml_with_lines(path, error_type=configuration_error, what="custom metrics file (YAML)")
        )
        if isinstance(value, Mapping) and "custom_metrics" in value:
            value = value["custom_metrics"]
        where = f"custom metrics file {path}"
    if not isinstance(value, list):
        raise ConfigurationError(f"{where}: must be a list of custom metric mappings")
    try:
        return tuple(CustomMetric.from_config(item) for item in value)
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}: {error}") from None


def _resolve(value: Any, base_dir: Path | None) -> Path:
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() or base_dir is None else base_dir / path


def _boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigurationError(f"{where}: must be true or false, got {value!r}")


def _optional_number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(f"{where}: must be a number, got {value!r}")
    return float(value)


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigurationError(f"answers option {name}: must be one of {', '.join(choices)}, got {value!r}")
