"""AnswerSettings: the one typed configuration of the answer metrics.

Everything, the correctness prompt file included, is checked when created, so a bad configuration
stops the run before the first judge call with a `ConfigurationError` naming the option or file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.answers.judge_kinds import JUDGES
from pytest_graphrag_eval.answers.prompts import correctness_template
from pytest_graphrag_eval.answers.result_keys import ANSWER_KEYS
from pytest_graphrag_eval.corpus.input_files import configuration_error
from pytest_graphrag_eval.corpus.yaml_lines import load_yaml_with_lines, to_plain
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm.prompts import PromptTemplate
from pytest_graphrag_eval.report_model import HUGE_INTEGER, is_finite_number, is_huge_integer
from pytest_graphrag_eval.scoring import BASE_KEYS, KeyCatalogue

RELEVANCE_BACKENDS = ("native", "ragas")
OUTPUT_MODES = ("json_schema", "json_object")
INPUT_NAMES = ("question", "reference_answer", "actual_answer", "steps", "reference_steps")
# "value" takes any JSON scalar the judge gives (graphrag-eval's untyped outputs).
FIELD_TYPES = ("number", "integer", "boolean", "text", "value")
STEPS_KEYS = ("name", "args", "output")
RESERVED_FIELDS = frozenset({"error", "judge"})
# The steps and retrieval scorers' keys, which this package may not import (DESIGN.md's layers);
# tests/test_result_keys.py proves they are what those scorers declare.
_SIBLING_SEGMENTS = frozenset({"steps", "retrieval", "erag"})
_SIBLING_KEYS = frozenset(
    {"steps_score", "steps_score_error", "retrieval_ap", "retrieval_mrr", "retrieval_error"}
    | {"erag_cost", "erag_error"}
    | {"steps_result_precision", "steps_result_recall", "steps_result_f1", "steps_output_error"}
)
_OWN_KEYS = KeyCatalogue([*BASE_KEYS, *ANSWER_KEYS])
RESERVED_PREFIXES = _OWN_KEYS.first_segments() | _SIBLING_SEGMENTS
"""First name segments of built-in result keys: a custom metric's name must not start with one."""
BUILTIN_KEYS = _OWN_KEYS.names() | _SIBLING_KEYS
"""Built-in result keys: an unprefixed output (graphrag-eval's custom evaluations) must not take one."""
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_KEY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
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
        if not _KEY_NAME.match(self.name) or self.name in RESERVED_FIELDS:
            raise ConfigurationError(
                f"output field {self.name!r}: use letters, digits and '_' (not 'error' or 'judge')"
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
    def from_config(cls, name: str, raw: object) -> OutputField:
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
    """A metric the user declares: the inputs the judge sees, its instructions and reply fields.

    Outputs are `<name>_<field>`, or `<field>` with `prefix_outputs=False` (graphrag-eval's).
    """

    name: str
    inputs: tuple[str, ...]
    instructions: str
    outputs: tuple[OutputField, ...]
    steps_name: str | None = None
    prefix_outputs: bool = True
    steps_keys: tuple[str, ...] = STEPS_KEYS

    def __post_init__(self) -> None:
        where = f"custom metric {self.name!r}"
        if self.prefix_outputs:
            self._check_prefixed_names(where)
        else:
            self._check_plain_names(where)
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
        if self.steps_name is not None and not {"steps", "reference_steps"} & set(self.inputs):
            raise ConfigurationError(f"{where}: steps_name needs 'steps' among the inputs")
        if not self.steps_keys or not set(self.steps_keys) <= set(STEPS_KEYS):
            raise ConfigurationError(f"{where}: steps_keys must be some of {', '.join(STEPS_KEYS)}")

    def _check_prefixed_names(self, where: str) -> None:
        if not _IDENTIFIER.match(self.name):
            raise ConfigurationError(f"{where}: the name must be lower-case letters, digits and '_'")
        if self.name.split("_")[0] in RESERVED_PREFIXES:
            raise ConfigurationError(
                f"{where}: names starting with {self.name.split('_')[0]!r} are reserved for built-in "
                f"result keys; choose another name (e.g. 'my_{self.name}')"
            )
        for output in self.outputs:
            if not _IDENTIFIER.match(output.name):
                raise ConfigurationError(
                    f"{where}: output field {output.name!r}: use lower-case letters, digits and '_'"
                )

    def _check_plain_names(self, where: str) -> None:
        if not _KEY_NAME.match(self.name):
            raise ConfigurationError(
                f"{where}: the name must be letters, digits and '_' (it names result keys)"
            )
        taken = sorted(BUILTIN_KEYS.intersection(self.result_keys()))
        if taken:
            raise ConfigurationError(
                f"{where}: result key(s) {', '.join(taken)} are reserved for built-in results"
            )

    def output_key(self, field_name: str) -> str:
        """The result key of one output field."""
        return f"{self.name}_{field_name}" if self.prefix_outputs else field_name

    def result_keys(self) -> list[str]:
        """Every key this metric may write, to check for clashes."""
        return [self.output_key(output.name) for output in self.outputs] + [
            f"{self.name}_error",
            f"{self.name}_judge",
        ]

    @classmethod
    def from_config(cls, raw: object) -> CustomMetric:
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
    """Which answer metrics run and how they are judged (docs/answers.md lists the options).

    The correctness prompt file is checked even when another judge is chosen, so switching judges
    never hides a broken file.
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
    correctness_prompt: str | None = None
    retrieval_judges: bool = False
    temperature: float = 0.0
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
        if self.correctness_prompt is not None and self.correctness_prompt_file is not None:
            raise ConfigurationError(
                "answers options correctness_prompt and correctness_prompt_file exclude each other"
            )
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            raise ConfigurationError(
                f"answers option temperature: must be a number, got {self.temperature!r}"
            )
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigurationError(
                f"answers option temperature: must be from 0 to 2, got {self.temperature!r}"
            )
        object.__setattr__(
            self,
            "correctness_template",
            correctness_template(self.correctness_prompt_file, self.correctness_prompt),
        )
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
        return self.judge == "llm" or self.relevance or self.retrieval_judges or bool(self.custom_metrics)

    @classmethod
    def from_mapping(
        cls, raw: Mapping[str, object], *, base_dir: Path | None = None, source: str = "answers settings"
    ) -> AnswerSettings:
        """Settings from ini/YAML values (paths from `base_dir`, '-' for '_'); unknown keys name `source`."""
        known = {item.name for item in fields(cls) if item.init}
        values: dict[str, Any] = {}  # each field its own type (_convert)
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


def _convert(name: str, value: object, base_dir: Path | None, source: str) -> Any:
    where = f"{source}: answers option {name}"
    if name in ("relevance", "retrieval_judges"):
        return boolean_option(value, where)
    if name in ("temperature", "relevance_questions", "repeats"):
        number, kind = (float, "number") if name == "temperature" else (int, "whole number")
        try:
            return number(str(value).strip())
        except ValueError:
            raise ConfigurationError(f"{where}: must be a {kind}, got {value!r}") from None
    if name == "correctness_prompt":
        return str(value)
    if name == "correctness_prompt_file":
        return _resolve(value, base_dir)
    return _custom_metrics(value, base_dir, where) if name == "custom_metrics" else str(value).strip()


def _custom_metrics(value: object, base_dir: Path | None, where: str) -> tuple[CustomMetric, ...]:
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
        return tuple(
            item if isinstance(item, CustomMetric) else CustomMetric.from_config(item) for item in value
        )
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}: {error}") from None


def _resolve(value: object, base_dir: Path | None) -> Path:
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() or base_dir is None else base_dir / path


def boolean_option(value: object, where: str) -> bool:
    """A yes/no option as YAML or ini text may give it; `where` starts the error message."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigurationError(f"{where}: must be true or false, got {value!r}")


def _optional_number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if not is_finite_number(value):
        shown = HUGE_INTEGER if is_huge_integer(value) else repr(value)
        raise ConfigurationError(f"{where}: must be a number, got {shown}")
    return float(value)


def _choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigurationError(f"answers option {name}: must be one of {', '.join(choices)}, got {value!r}")
