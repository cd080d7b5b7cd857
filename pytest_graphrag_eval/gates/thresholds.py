"""Per-question thresholds: parsing, precedence across sources, and checking a result.

Sources, least to most specific: ini, command line, corpus file, template, question; the most
specific wins per metric, and `null` in YAML removes what a less specific source set. A metric that
was not computed never passes: the check fails and says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.errors import ConfigurationError, CorpusError, SourceLocation
from pytest_graphrag_eval.gates.expressions import (
    ExpressionError,
    check_metric_name,
    check_source,
    compare,
    format_number,
    numeric_value,
    parse_limit,
    split_comparison,
    yaml_rules,
)
from pytest_graphrag_eval.gates.metric_hints import metric_error, missing_metric_hint
from pytest_graphrag_eval.gates.model import outcome_message

if TYPE_CHECKING:  # only named in annotations: the corpus reader imports the YAML parsers
    from pytest_graphrag_eval.corpus.reference_corpus import Corpus

THRESHOLD_SOURCES = ("ini", "cli", "corpus", "template", "question")
OPTION_NAMES = {"ini": "ini option graphrag_thresholds", "cli": "--graphrag-threshold"}
_YAML_FIELD = "thresholds"
_SHAPES = "a list of expressions like 'steps_score>=0.8' or a mapping {metric: '>=0.8'}"


@dataclass(frozen=True)
class Threshold:
    """`metric op limit`, remembering which source set it (one of THRESHOLD_SOURCES)."""

    metric: str
    op: str
    limit: float
    source: str = "cli"

    @property
    def expression(self) -> str:
        return f"{self.metric}{self.op}{format_number(self.limit)}"

    def __str__(self) -> str:
        return self.expression


@dataclass(frozen=True)
class ThresholdCheck:
    """The outcome of one threshold on one result; `actual` is None when not computed."""

    metric: str
    op: str
    limit: float
    actual: float | None
    passed: bool
    source: str
    message: str

    @property
    def expression(self) -> str:
        return f"{self.metric}{self.op}{format_number(self.limit)}"

    def to_dict(self) -> dict[str, Any]:
        return {"expression": self.expression, **asdict(self)}


def parse_threshold(text: str, source: str = "cli") -> Threshold:
    """Parse `metric op number`; ConfigurationError names the option (cli/ini) and the text."""
    check_source(source, THRESHOLD_SOURCES)
    try:
        return _parse(text, source)
    except ExpressionError as error:
        where = OPTION_NAMES.get(source, f"{source} threshold")
        raise ConfigurationError(f"{where}: invalid threshold {text!r}: {error}") from None


def parse_threshold_list(texts: Iterable[str] | None, source: str) -> dict[str, Threshold]:
    """Thresholds of one option (ini lines or repeated CLI flags); a later one for a metric wins."""
    thresholds: dict[str, Threshold] = {}
    for text in texts or ():
        threshold = parse_threshold(text, source)
        thresholds[threshold.metric] = threshold
    return thresholds


def thresholds_from_yaml(value: object, source: str, location: SourceLocation) -> dict[str, Threshold | None]:
    """A corpus `thresholds:` field: expressions, one expression, or `{metric: ">=0.8" | 0.8 | null}`
    (a bare number means `>=`); None values mark removals."""
    check_source(source, THRESHOLD_SOURCES)

    def from_entry(metric: str, limit: object) -> tuple[str, Threshold | None]:
        name = check_metric_name(metric)
        return name, None if limit is None else Threshold(name, *parse_limit(limit), source)

    thresholds: dict[str, Threshold | None] = {}
    for where, listed, (metric, threshold) in yaml_rules(
        value, location, _YAML_FIELD, _SHAPES, lambda text: _named(_parse(text, source)), from_entry
    ):
        if listed and metric in thresholds:
            raise CorpusError(f"a second threshold for {metric!r}", location, where)
        thresholds[metric] = threshold
    return thresholds


def _named(threshold: Threshold) -> tuple[str, Threshold | None]:
    return threshold.metric, threshold


@dataclass(frozen=True)
class CorpusThresholds:
    """A corpus file's `thresholds:` at every level, parsed once; a None value removes that metric."""

    file: str | None
    corpus: Mapping[str, Threshold | None]
    templates: Mapping[str, Mapping[str, Threshold | None]]
    questions: Mapping[str, Mapping[str, Threshold | None]]  # only the questions that set their own


def parse_corpus_thresholds(corpus: Corpus) -> CorpusThresholds:
    """Parse every `thresholds:` of a corpus once, at collection: a typo is an error before any call."""
    file_layer = thresholds_from_yaml(
        corpus.settings.get(_YAML_FIELD), "corpus", SourceLocation(file=corpus.file)
    )
    templates, questions = {}, {}
    for template in corpus.templates:
        templates[template.template_id] = thresholds_from_yaml(
            template.thresholds, "template", template.location
        )
        for question in template.questions:
            if question.thresholds is not None:
                questions[question.question_id] = thresholds_from_yaml(
                    question.thresholds, "question", question.location
                )
    return CorpusThresholds(corpus.file, file_layer, templates, questions)


class ThresholdResolver:
    """Thresholds per question from layers parsed once; each file's and template's merge is kept, so
    only a question's own layer is merged per question."""

    def __init__(self, options: Mapping[str, Threshold]):
        self._options: dict[str, Threshold | None] = dict(options)
        self._corpus: dict[str | None, dict[str, Threshold | None]] = {}
        self._template: dict[tuple[str | None, str | None], dict[str, Threshold | None]] = {}

    def for_parsed(
        self, parsed: CorpusThresholds, template_id: str | None, question_id: str | None
    ) -> dict[str, Threshold]:
        """The options, then the corpus file's, the template's and the question's own layers; a None
        in a layer removes that metric (kept as None so later layers see it)."""
        merged = self._corpus.get(parsed.file)
        if merged is None:
            merged = self._corpus[parsed.file] = {**self._options, **parsed.corpus}
        key = (parsed.file, template_id)
        if key not in self._template:
            self._template[key] = {**merged, **(parsed.templates.get(template_id, {}) if template_id else {})}
        merged = self._template[key]
        own = parsed.questions.get(question_id) if question_id is not None else None
        if own is not None:
            merged = {**merged, **own}
        return {metric: threshold for metric, threshold in sorted(merged.items()) if threshold is not None}


def check_thresholds(
    result: Mapping[str, Any], thresholds: Mapping[str, Threshold] | Iterable[Threshold]
) -> list[ThresholdCheck]:
    items = thresholds.values() if isinstance(thresholds, Mapping) else thresholds
    return [_check(result, threshold) for threshold in items]


def _check(result: Mapping[str, Any], threshold: Threshold) -> ThresholdCheck:
    metric, op, limit, source = threshold.metric, threshold.op, threshold.limit, threshold.source
    condition = f"{op} {format_number(limit)}"
    raw = result.get(metric)
    actual = numeric_value(raw)
    if actual is not None:
        passed = compare(actual, op, limit)
        message = outcome_message(metric, actual, condition, passed, f"{source} threshold")
        return ThresholdCheck(metric, op, limit, actual, passed, source, message)
    if raw is not None:
        reason = f"{metric} is not a number: {raw!r}"
    else:
        reason = f"{metric} was not computed: {_missing_reason(result, metric)}"
    message = f"{reason} (required {condition}, {source} threshold)"
    return ThresholdCheck(metric, op, limit, None, False, source, message)


def _missing_reason(result: Mapping[str, Any], metric: str) -> str:
    found = metric_error(result, metric)
    if found is not None:
        key, text = found
        return f'{key}: "{text}"'
    if result.get("status") == "error":
        return f'the agent returned an error: "{result.get("error") or "no error text"}"'
    available = [key for key, value in result.items() if numeric_value(value) is not None]
    return missing_metric_hint(metric, available)


def _parse(text: object, source: str) -> Threshold:
    if not isinstance(text, str):
        raise ExpressionError(f"expected text, got {type(text).__name__}")
    metric, op, limit = split_comparison(text)
    return Threshold(check_metric_name(metric), op, limit, source)
