"""The typed report: a `QuestionResult` per question and the versioned `ReportDocument`.

A question's result travels as a JSON object: graphrag-eval's keys, the scorers'
metrics, and the verdict the plugin adds. Its metric keys are open-ended (every
scorer, a user's too, adds its own) and its key order is what the JSON report
writes, so the object is kept as it came (`QuestionResult.record`) and what
readers decide on is parsed from it once, here, into fields: the ids, the
verdict (`Outcome`), the agent's error, the scorers' errors and a refused judge
call (`Refusal`). The terminal, Markdown, HTML, merge and baseline reader ask
these fields; none searches a text for them.

Plain dataclasses, not msgspec Structs: msgspec is an optional speed extra and
the core must run without it, and a Struct would need a fixed schema the
open-ended metric keys do not have. The report document checks a file's shape
when it is read (`ReportDocument.from_json`), naming the file and the question.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar, cast

from pytest_graphrag_eval.errors import InputError, SourceLocation

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

REPORT_FORMAT_VERSION = 2
_Record = TypeVar("_Record", bound="DataclassInstance")
_Section = TypeVar("_Section")
# The oldest report a baseline or a shard may be: version 1 records no per-question outcome, so
# regressions (passed then, failing now) cannot be told from it.
MIN_FORMAT_VERSION = 2
# Set by the scorers' judge when a call was refused (see `Refusal`); absent when none was.
REFUSAL_KEY = "judge_refusal"
# What reports of the previous version wrote into a scorer's `<metric>_error` for a refused call,
# read only when a record has no `judge_refusal` field (`refusal_of`).
_LEGACY_REFUSAL_TEXTS = (
    ("judge budget reached (no new call is sent)", "budget"),
    ("no cached reply and this run is cache-only (no call is sent)", "cache_miss"),
    ("no reply from the judge batch", "batch"),
)


class Outcome(StrEnum):
    """A question's verdict: pytest's outcome, or why there is none."""

    PASSED = "passed"
    FAILED = "failed"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"  # scored, but Ctrl-C stopped the run before its verdict
    NOT_EVALUATED = "not_evaluated"  # the judge budget stopped its scoring: neither pass nor fail


OUTCOME_NAMES = frozenset(outcome.value for outcome in Outcome)
_OUTCOME_OF_NAME = {outcome.value: outcome for outcome in Outcome}  # a lookup: Outcome(name) is slow
PASSING = frozenset({Outcome.PASSED, Outcome.XPASSED})


class Refusal(StrEnum):
    """Why a judge call of the question was not sent (or not answered)."""

    BUDGET = "budget"  # the spending limit was reached: the question is not evaluated
    CACHE_MISS = "cache_miss"  # a cache-only run had no cached reply: the question's error
    BATCH = "batch"  # a judge batch did not answer the request


_REFUSAL_NAMES = frozenset(refusal.value for refusal in Refusal)

# The one vocabulary the terminal, the Markdown summary and the HTML report name outcomes in; the JSON
# report holds the machine names it is read from (`outcome`, `status: error`, `judge_refusal`).
AGENT_ERROR = "agent error"  # the agent returned an error or no response (JSON: `status: error`)
NOT_EVALUATED_IN_BASELINE = "in the baseline"  # a comparison's question the baseline run did not score
REFUSAL_LABELS = {
    Refusal.BUDGET: "judge budget",
    Refusal.CACHE_MISS: "cache miss",
    Refusal.BATCH: "no batch reply",
}


def not_evaluated_reasons(reasons: Sequence[str]) -> str:
    """`cache miss`, `2 judge budget, 1 cache miss`: one question's reason each (`REFUSAL_LABELS`,
    `NOT_EVALUATED_IN_BASELINE`), counted in first-seen order."""
    counted = Counter(reasons)
    if len(counted) == 1:
        return reasons[0]
    return ", ".join(f"{count} {reason}" for reason, count in counted.items())


def not_evaluated_text(reasons: Sequence[str]) -> str:
    """`23 not evaluated (cache miss)`: how every summary counts the questions no judge scored."""
    return f"{len(reasons)} not evaluated ({not_evaluated_reasons(reasons)})"


def not_evaluated_reason_of(record: Mapping[str, Any]) -> str | None:
    """Why a result record was not evaluated, as summaries name it (None: it was evaluated)."""
    if record.get("outcome") != Outcome.NOT_EVALUATED.value:
        return None
    return REFUSAL_LABELS[refusal_of(record) or Refusal.BUDGET]  # a record before judge_refusal: a budget


def compared_not_evaluated_text(ids: Iterable[object], current: Mapping[str, Mapping[str, Any]]) -> str:
    """The comparison's questions left out because either run did not score them (`ids`), with this
    run's reason for each (`current`: this run's result records by question id)."""
    return not_evaluated_text(
        [
            not_evaluated_reason_of(current.get(str(question_id)) or {}) or NOT_EVALUATED_IN_BASELINE
            for question_id in ids
        ]
    )


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question's result; `record` is its JSON object as the report writes it."""

    record: Mapping[str, object]
    template_id: str
    question_id: str
    outcome: Outcome | None  # None: no verdict given (a library run, `run_evaluation`)
    agent_error: str | None  # the agent's error (status "error"), None when it answered

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> QuestionResult:
        """The fields of a result object; `ValueError` naming the field when one is malformed."""
        template_id, question_id = record.get("template_id"), record.get("question_id")
        for name, value in (("template_id", template_id), ("question_id", question_id)):
            if not isinstance(value, str):
                raise ValueError(f"has no string `{name}`")
        outcome = record.get("outcome")
        typed_outcome = _OUTCOME_OF_NAME.get(outcome) if isinstance(outcome, str) else None
        if outcome is not None and typed_outcome is None:
            raise ValueError(f"`outcome` must be one of {', '.join(sorted(OUTCOME_NAMES))}, got {outcome!r}")
        refusal = record.get(REFUSAL_KEY)
        if refusal is not None and refusal not in _REFUSAL_NAMES:
            raise ValueError(f"`{REFUSAL_KEY}` must be one of {', '.join(Refusal)}, got {refusal!r}")
        if (huge := huge_integer_key(record)) is not None:
            raise ValueError(f"`{huge}` must be a number a float holds, got {HUGE_INTEGER}")
        return cls(
            record=record,
            template_id=str(template_id),
            question_id=str(question_id),
            outcome=typed_outcome,
            agent_error=str(record.get("error") or "") if record.get("status") == "error" else None,
        )

    @property
    def scorer_errors(self) -> dict[str, str]:
        return _scorer_errors(self.record)

    @property
    def not_evaluated_reason(self) -> str | None:
        """Why the question was not evaluated, as summaries name it (None: it was evaluated)."""
        return not_evaluated_reason_of(self.record)

    @property
    def key(self) -> tuple[str, str]:
        """Questions are matched across runs (baseline, shards) by (template id, question id)."""
        return (self.template_id, self.question_id)

    @property
    def not_evaluated(self) -> bool:
        return self.outcome is Outcome.NOT_EVALUATED

    @property
    def scored(self) -> bool:
        """Its scores count in means: the agent answered and no budget stopped its scoring."""
        return self.agent_error is None and self.outcome is not Outcome.NOT_EVALUATED

    @property
    def passed(self) -> bool | None:
        """True/False for a pass/fail verdict; None for skipped, xfailed, not evaluated or none."""
        if self.outcome in PASSING:
            return True
        return False if self.outcome is Outcome.FAILED else None


def _scorer_errors(record: Mapping[str, object]) -> dict[str, str]:
    """`<metric>_error` -> message, for the metrics that could not be scored."""
    return {key: value for key, value in record.items() if key.endswith("_error") and isinstance(value, str)}


def refusal_of(record: Mapping[str, object]) -> Refusal | None:
    """A result's refused judge call: its `judge_refusal` field (a previous version's record: the
    refusal its error texts quote)."""
    value = record.get(REFUSAL_KEY)
    if value is not None:
        return Refusal(value) if value in _REFUSAL_NAMES else None
    errors = _scorer_errors(record).values()
    quoted = {name for text, name in _LEGACY_REFUSAL_TEXTS for error in errors if text in error}
    return next((Refusal(name) for _, name in _LEGACY_REFUSAL_TEXTS if name in quoted), None)  # budget first


def outcome_counts(results: Sequence[QuestionResult], without: Collection[Outcome] = ()) -> list[str]:
    """`12 passed`, `3 failed`, `2 not evaluated (judge budget)`, `1 agent error`: the non-zero counts
    of each outcome (but those `without`) and of agent errors (a verdict is also counted), named alike
    by the terminal, the Markdown summary and the HTML report."""
    counted = Counter(result.outcome for result in results if result.outcome is not None)
    reasons = [
        reason
        for result in results
        if result.outcome is Outcome.NOT_EVALUATED and (reason := result.not_evaluated_reason) is not None
    ]
    parts = [
        not_evaluated_text(reasons)
        if outcome is Outcome.NOT_EVALUATED and reasons
        else f"{counted[outcome]} {outcome.value.replace('_', ' ')}"
        for outcome in Outcome
        if counted[outcome] and outcome not in without
    ]
    errors = sum(1 for result in results if result.agent_error is not None)
    if errors:
        parts.append(f"{errors} {AGENT_ERROR}{'s' if errors != 1 else ''}")
    return parts


def _field_error(location: SourceLocation, field_name: str, expected: str) -> InputError:
    return InputError(f"`{field_name}` must be {expected}", location, field_name)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not is_huge_integer(value)


_FLOAT_MAX = sys.float_info.max
HUGE_INTEGER = "an integer beyond a float's range (about 1.8e308)"


def is_huge_integer(value: object) -> bool:
    """An integer no float holds: JSON and YAML read any run of digits as an int, and `float(10**400)`
    (a mean, `math.isfinite`, a chart) raises `OverflowError`."""
    return type(value) is int and not -_FLOAT_MAX <= value <= _FLOAT_MAX


def huge_integer_key(record: Mapping[str, object]) -> str | None:
    """The first key of a result or a scorer's keys holding an integer no float holds; None if none.
    Every result read passes here: the test is written out, not a call per value (half the time)."""
    for key, value in record.items():
        if type(value) is int and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
            return key
    return None


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """A real number (not a flag) that is finite as a float, decided without converting it."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and -_FLOAT_MAX <= value <= _FLOAT_MAX
    )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_flag(value: object) -> bool:
    return isinstance(value, bool)


def _list_of(fits: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: isinstance(value, list) and all(fits(item) for item in value)


def _or_null(fits: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or fits(value)


# Each field type a report's sections hold (as annotated): whether a JSON value fits it, and what the
# message says it must be.
_KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "str": (_is_text, "a string"),
    "str | None": (_or_null(_is_text), "a string or null"),
    "float": (_is_number, "a number"),
    "float | None": (_or_null(_is_number), "a number or null"),
    "int": (_is_count, "an integer"),
    "int | None": (_or_null(_is_count), "an integer"),
    "bool": (_is_flag, "true or false"),
    "bool | None": (_or_null(_is_flag), "true or false"),
    "tuple[str, ...]": (_list_of(_is_text), "a list of texts"),
    "tuple[str, ...] | None": (_or_null(_list_of(_is_text)), "a list of texts"),
    "tuple[Mapping[str, object], ...]": (
        _list_of(lambda value: isinstance(value, Mapping)),
        "a list of objects",
    ),
    "tuple[str | None, ...]": (_list_of(_or_null(_is_text)), "a list of outcomes (texts) or nulls"),
    "tuple[float | None, ...]": (_list_of(_or_null(_is_number)), "a list of numbers or nulls"),
    "object": (lambda value: True, "any value"),
}


class _Fields:
    """The fields of one object of a report's section (`where`: its path, `gates[2]`), each read with
    its type checked; a wrong one is an `InputError` naming the file and the field. Numbers are kept
    as read (an int stays one), so a section is written back as it was."""

    def __init__(self, data: object, location: SourceLocation, where: str) -> None:
        if not isinstance(data, Mapping):
            raise _field_error(location, where, "an object")
        self.data, self.location, self.where = data, location, where

    def read(self, name: str, kind: str) -> Any:
        """The field `name` if it is of the type `kind` (a key of `_KINDS`); a list as a tuple."""
        value = self.data.get(name)
        fits, expected = _KINDS[kind]
        if not fits(value):
            raise _field_error(self.location, f"{self.where}.{name}", expected)
        return tuple(value) if isinstance(value, list) else value

    def record(self, cls: type[_Record], **given: object) -> _Record:
        """A `cls` of the fields `given` and the others read by their annotated types, in order."""
        read = {
            item.name: self.read(item.name, str(item.type)) for item in fields(cls) if item.name not in given
        }
        return cls(**read, **given)

    def object(self, name: str) -> _Fields:
        """The object `name`, read as `where.name`."""
        return _Fields(self.data.get(name), self.location, f"{self.where}.{name}")

    def each(self, name: str) -> list[_Fields]:
        """The objects of the list `name`, each read as `name[i]`."""
        return [
            _Fields(item, self.location, f"{self.where}.{name}[{index}]")
            for index, item in enumerate(self.read(name, "tuple[Mapping[str, object], ...]"))
        ]


def _fields_json(record: Any) -> dict[str, object]:
    """A flat record's JSON object: its fields in their order, tuples as lists."""
    return {
        name: list(value) if isinstance(value, tuple) else value
        for name, value in ((item.name, getattr(record, item.name)) for item in fields(record))
    }


@dataclass(frozen=True, slots=True)
class GateRecord:
    """One line of the report's `gates`: an evaluated gate as later readers (summaries, the history,
    a merge's verdict) see it, without the parsed `Gate` it came from."""

    expression: str  # the gate, normalized (`micro:answer_f1.mean>=0.8`)
    gate: str  # the gate as configured (`template[*]:...` for each template's line)
    passed: bool
    actual: float | None  # the value held to the limit; None when there was none to measure
    scope: str
    template: str | None
    metric: str
    stat: str | None
    op: str
    limit: float
    change: str | None
    confidence: float | None
    source: str
    message: str
    over: str | None = None  # a gate over runs or repeats, with its window of runs
    window: int | None = None
    excluding_flaky: tuple[str, ...] | None = None  # a gate on change that left flaky questions out

    def to_json(self) -> dict[str, object]:
        """The line's JSON object, keys in the order every version wrote them."""
        line = _fields_json(self)
        if not self.over:
            del line["over"], line["window"]
        if self.excluding_flaky is None:
            del line["excluding_flaky"]
        return line

    @property
    def row(self) -> str:
        """Which summary row the gate judges: `micro`, `macro` or its template's id."""
        return (self.template or "") if self.scope == "template" else self.scope or "micro"


@dataclass(frozen=True, slots=True)
class BatchSpend:
    """`judge_spend.batch`: the judge batches a run sent (`--graphrag-judge-batch`)."""

    batches: tuple[Mapping[str, object], ...]  # each batch's record as the batch client keeps it
    requests: int
    unanswered_requests: int
    unanswered_ids: tuple[str, ...]  # the questions with a request no batch answered

    def to_json(self) -> dict[str, object]:
        section = _fields_json(self)
        ids = section.pop("unanswered_ids")  # written after their count
        return {**section, "unanswered_questions": len(self.unanswered_ids), "unanswered_ids": ids}


@dataclass(frozen=True, slots=True)
class JudgeSpend:
    """The report's `judge_spend`: what the judge cost against the run's limits, and the questions a
    reached limit, a cache-only run's missing replies or an unanswered batch left unscored."""

    cost_usd: float
    requests: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    max_cost_usd: float | None
    max_calls: int | None
    refused_calls: int  # judge calls the budget did not send
    not_evaluated_ids: tuple[str, ...]
    cache_miss_ids: tuple[str, ...] | None = None  # None: not a cache-only run
    cache_miss_keys: tuple[str, ...] = ()
    batch: BatchSpend | None = None

    @property
    def cache_only(self) -> bool:
        return self.cache_miss_ids is not None

    def to_json(self) -> dict[str, object]:
        """The section's JSON object, keys in the order every version wrote them."""
        section: dict[str, object] = {
            "cost_usd": self.cost_usd,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "max_cost_usd": self.max_cost_usd,
            "max_calls": self.max_calls,
            "budget_reached": self.refused_calls > 0,
            "refused_calls": self.refused_calls,
            "not_evaluated": len(self.not_evaluated_ids),
            "not_evaluated_ids": list(self.not_evaluated_ids),
        }
        if self.cache_miss_ids is not None:
            section.update(
                cache_only=True,
                cache_miss_questions=len(self.cache_miss_ids),
                cache_miss_ids=list(self.cache_miss_ids),
                cache_miss_keys=list(self.cache_miss_keys),
            )
        if self.batch is not None:
            section["batch"] = self.batch.to_json()
        return section

    @classmethod
    def from_json(cls, spend: _Fields) -> JudgeSpend:
        """A report's `judge_spend`; `InputError` naming the file and the field."""
        cache_only = spend.data.get("cache_only") is True
        return spend.record(
            cls,
            batch=None if spend.data.get("batch") is None else spend.object("batch").record(BatchSpend),
            cache_miss_ids=spend.read("cache_miss_ids", "tuple[str, ...]") if cache_only else None,
            cache_miss_keys=spend.read("cache_miss_keys", "tuple[str, ...]") if cache_only else (),
        )


# A metric's statistics in one group: sum, mean, median, min and max (the macro group: mean).
Statistics = Mapping[str, float]
_STEPS = "steps"  # a template's step summary: counts by step name, and the judged step metrics


@dataclass(frozen=True, slots=True)
class GroupAggregates:
    """One group's figures (a template's, all questions', the templates' means) as the report
    writes them: counts and rates, each metric's `Statistics`, and a template's step summary.
    Open-ended like a result (every scorer's metric is aggregated), so the object is kept as it
    came and read through `statistics`; `Aggregates.from_json` checked its shape."""

    record: Mapping[str, object]

    @property
    def statistics(self) -> dict[str, Statistics]:
        """Each metric's statistics, in the group's order."""
        return {
            key: cast(Statistics, value)
            for key, value in self.record.items()
            if key != _STEPS and isinstance(value, Mapping)
        }

    def stat(self, metric: str, name: str) -> float | None:
        """One statistic of a metric (`mean`), None when the group has none."""
        value = self.record.get(metric)
        return cast(Statistics, value).get(name) if isinstance(value, Mapping) and metric != _STEPS else None

    @classmethod
    def from_json(cls, group: _Fields) -> GroupAggregates:
        for key, value in group.data.items():
            if type(value) is dict and key != _STEPS and _NUMBER_TYPES.issuperset(map(type, value.values())):
                continue  # a metric's statistics as a parser reads them, checked in one pass of C
            nested = key == _STEPS
            if not (_is_number(value) and not nested) and not (
                isinstance(value, Mapping) and all(_is_statistic(item, nested) for item in value.values())
            ):
                raise _field_error(group.location, f"{group.where}.{key}", "a number or an object of numbers")
        return cls(group.data)


_NUMBER_TYPES = frozenset({int, float})


def _is_statistic(value: object, nested: bool) -> bool:
    if nested and isinstance(value, Mapping):
        return all(_is_number(item) for item in value.values())
    return _is_number(value)


@dataclass(frozen=True, slots=True)
class Aggregates:
    """The report's `aggregates` (`aggregates.compute_aggregates`): per template, over all
    questions (micro) and the templates' means (macro); None where the report has no such part
    (a report of no results has none)."""

    per_template: Mapping[str, GroupAggregates] | None = None
    micro: GroupAggregates | None = None
    macro: GroupAggregates | None = None

    @classmethod
    def of(cls, computed: Mapping[str, Any]) -> Aggregates:
        """The typed form of what `compute_aggregates` returned (its shape is known)."""
        if not computed:
            return cls()
        return cls(
            {template: GroupAggregates(group) for template, group in computed["per_template"].items()},
            GroupAggregates(computed["micro"]),
            GroupAggregates(computed["macro"]),
        )

    def to_json(self) -> dict[str, object]:
        """The section's parts present, in the order `compute_aggregates` writes them."""
        section: dict[str, object] = {}
        if self.per_template is not None:
            section["per_template"] = {
                template: group.record for template, group in self.per_template.items()
            }
        for name, group in (("micro", self.micro), ("macro", self.macro)):
            if group is not None:
                section[name] = group.record
        return section

    @classmethod
    def from_json(cls, section: _Fields) -> Aggregates:
        """A report's `aggregates`; `InputError` naming the file and the field."""

        def group(name: str) -> GroupAggregates | None:
            return None if section.data.get(name) is None else GroupAggregates.from_json(section.object(name))

        templates = None if section.data.get("per_template") is None else section.object("per_template")
        return cls(
            None
            if templates is None
            else {str(name): GroupAggregates.from_json(templates.object(name)) for name in templates.data},
            group("micro"),
            group("macro"),
        )


class Classification(StrEnum):
    """How a question changed between a baseline run and this one (`compare.classify`)."""

    REGRESSED = "regressed"
    FIXED = "fixed"
    UNCHANGED = "unchanged"
    NEW = "new"
    REMOVED = "removed"
    EDITED = "edited"
    NOT_EVALUATED = "not_evaluated"


_CLASSIFICATION_OF_NAME = {classification.value: classification for classification in Classification}
# The comparison's id lists, in the order the report writes them, and the class each holds.
CHANGE_LISTS = (
    ("regressions", Classification.REGRESSED),
    ("fixed", Classification.FIXED),
    ("new", Classification.NEW),
    ("removed", Classification.REMOVED),
    ("edited", Classification.EDITED),
    ("unchanged", Classification.UNCHANGED),
    ("not_evaluated", Classification.NOT_EVALUATED),
)
# A question's change of one metric: {"baseline": ..., "current": ..., "delta": ...}.
MetricDelta = Mapping[str, float]
_DELTA_NAMES = ("baseline", "current", "delta")


@dataclass(frozen=True, slots=True)
class MetricChange:
    """One metric's paired change; interval, p-value and MDE are None with fewer than two pairs."""

    baseline: float | None
    current: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_pairs: int
    test: str
    min_detectable_delta: float | None

    @property
    def undetectable(self) -> bool:
        """A 0/1 metric's smallest detectable change is above 1: none is detectable on so few questions."""
        return (
            self.test == "mcnemar" and self.min_detectable_delta is not None and self.min_detectable_delta > 1
        )

    def all_finite(self) -> bool:
        """No NaN or infinity among its numbers (None is none)."""
        numbers = (self.baseline, self.current, self.delta, self.ci_low, self.ci_high, self.p_value)
        return all(value is None or math.isfinite(value) for value in (*numbers, self.min_detectable_delta))

    def to_dict(
        self, before: str = "baseline", after: str = "current"
    ) -> dict[str, float | int | str | None]:
        """The change's JSON object; the pass rate's names its means `before` and `after`."""
        # The fields in their order, without `dataclasses.asdict`'s deep copy of each value: a
        # comparison writes one per metric and template (thousands).
        return {
            before: self.baseline,
            after: self.current,
            "delta": self.delta,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "n_pairs": self.n_pairs,
            "test": self.test,
            "min_detectable_delta": self.min_detectable_delta,
        }

    @classmethod
    def from_json(cls, change: _Fields, before: str = "baseline", after: str = "current") -> MetricChange:
        return change.record(
            cls, baseline=change.read(before, "float | None"), current=change.read(after, "float | None")
        )


@dataclass(frozen=True, slots=True)
class QuestionChange:
    """How one question changed, with baseline, current and delta of every metric finite in both runs."""

    question_id: str
    template_id: str
    classification: Classification
    baseline_outcome: str | None
    current_outcome: str | None
    deltas: Mapping[str, MetricDelta] = field(repr=False)
    nodeid: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.template_id, self.question_id)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "question_id": self.question_id,
            "template_id": self.template_id,
            "classification": self.classification.value,
            "baseline_outcome": self.baseline_outcome,
            "current_outcome": self.current_outcome,
            "deltas": self.deltas,
        }
        if self.nodeid is not None:
            data["nodeid"] = self.nodeid
        return data

    @classmethod
    def from_json(cls, change: _Fields) -> QuestionChange:
        location = change.location
        classification = _CLASSIFICATION_OF_NAME.get(change.read("classification", "str"))
        if classification is None:
            raise _field_error(
                location, f"{change.where}.classification", f"one of {', '.join(Classification)}"
            )
        deltas = change.data.get("deltas")
        if not isinstance(deltas, Mapping) or not all(
            isinstance(values, Mapping) and all(_is_number(values.get(name)) for name in _DELTA_NAMES)
            for values in deltas.values()
        ):
            raise _field_error(location, f"{change.where}.deltas", "an object of {baseline, current, delta}")
        return change.record(cls, classification=classification, deltas=deltas)


@dataclass(frozen=True, slots=True)
class ComparedBaseline:
    """The comparison's `baseline`: the run compared with."""

    path: str | None
    started_at: object  # its `metadata.started_at` as it holds it: a text in the plugin's reports
    questions: int

    to_json = _fields_json


@dataclass(frozen=True)
class ComparisonSection:
    """The report's `comparison`: each question's change and each metric's paired change, overall,
    per template and of the pass rate (`compare.comparison.Comparison` computes it)."""

    baseline: ComparedBaseline
    confidence: float
    resamples: int
    seed: int
    questions: tuple[QuestionChange, ...]
    metrics: Mapping[str, MetricChange]
    per_template: Mapping[str, Mapping[str, MetricChange]]
    outcomes: MetricChange  # the pass rate's change (exact McNemar)

    def ids(self, classification: Classification) -> list[str]:
        """Question ids with this classification, in report order."""
        return [change.question_id for change in self.questions if change.classification == classification]

    @property
    def regressions(self) -> list[str]:
        return self.ids(Classification.REGRESSED)

    def outcomes_json(self) -> dict[str, float | int | str | None]:
        return self.outcomes.to_dict("baseline_pass_rate", "current_pass_rate")

    def to_json(self) -> dict[str, object]:
        """Exactly the `comparison` section of the JSON report."""
        return {
            "baseline": self.baseline.to_json(),
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
            **{name: self.ids(classification) for name, classification in CHANGE_LISTS},
            "questions": [change.to_json() for change in self.questions],
            "metrics": {metric: change.to_dict() for metric, change in self.metrics.items()},
            "per_template": {
                template: {metric: change.to_dict() for metric, change in changes.items()}
                for template, changes in self.per_template.items()
            },
            "outcomes": self.outcomes_json(),
        }

    @classmethod
    def from_json(cls, section: _Fields) -> ComparisonSection:
        """A report's `comparison`; `InputError` naming the file and the field. The id lists are
        those of the questions' classifications, which they must be."""
        baseline, metrics, per_template = (
            section.object(name) for name in ("baseline", "metrics", "per_template")
        )

        def changes(found: _Fields) -> dict[str, MetricChange]:
            return {metric: MetricChange.from_json(found.object(metric)) for metric in found.data}

        return cls(
            baseline=baseline.record(ComparedBaseline),
            confidence=section.read("confidence", "float"),
            resamples=section.read("resamples", "int"),
            seed=section.read("seed", "int"),
            questions=tuple(QuestionChange.from_json(question) for question in section.each("questions")),
            metrics=changes(metrics),
            per_template={template: changes(per_template.object(template)) for template in per_template.data},
            outcomes=MetricChange.from_json(
                section.object("outcomes"), "baseline_pass_rate", "current_pass_rate"
            ),
        )


@dataclass(frozen=True, slots=True)
class HistoryRun:
    """One run of the history section's window (this run last) and what changed from the run before."""

    run_id: str
    started_at: str
    commit: str | None
    branch: str | None
    passed: bool | None
    changed: tuple[str, ...]  # the identities (corpus, graph, responses, settings) that differ

    to_json = _fields_json


@dataclass(frozen=True, slots=True)
class FlakyQuestion:
    """A question the history calls flaky: its outcomes over the window, oldest first (None: absent)."""

    question_id: str
    template_id: str | None
    flips: int
    same_commit: bool  # it passed and failed on one commit
    outcomes: tuple[str | None, ...]

    to_json = _fields_json


@dataclass(frozen=True, slots=True)
class TrendSeries:
    """A gated value (`micro:steps_score.mean`) in each run of the window (None: the run had none)."""

    target: str
    values: tuple[float | None, ...]

    to_json = _fields_json


@dataclass(frozen=True, slots=True)
class HistorySection:
    """The report's `history`: the last runs, the flaky rule and questions, each question's outcomes
    over the runs, and the gated values' series (`report.history_section` builds it)."""

    runs: tuple[HistoryRun, ...]
    flaky_runs: int  # the flaky rule: at least `flaky_flips` flips in `flaky_runs` runs
    flaky_flips: int
    flaky: tuple[FlakyQuestion, ...]
    questions: Mapping[str, tuple[str | None, ...]]  # question id -> its outcomes, this run last
    series: tuple[TrendSeries, ...]

    @property
    def flaky_ids(self) -> frozenset[str]:
        return frozenset(entry.question_id for entry in self.flaky)

    def to_json(self) -> dict[str, object]:
        return {
            "runs": [run.to_json() for run in self.runs],
            "flaky_rule": {"runs": self.flaky_runs, "min_flips": self.flaky_flips},
            "flaky": [entry.to_json() for entry in self.flaky],
            "questions": {question_id: list(outcomes) for question_id, outcomes in self.questions.items()},
            "series": [series.to_json() for series in self.series],
        }

    @classmethod
    def from_json(cls, section: _Fields) -> HistorySection:
        """A report's `history`; `InputError` naming the file and the field."""
        rule, questions = section.object("flaky_rule"), section.object("questions")
        return cls(
            runs=tuple(run.record(HistoryRun) for run in section.each("runs")),
            flaky_runs=rule.read("runs", "int"),
            flaky_flips=rule.read("min_flips", "int"),
            flaky=tuple(entry.record(FlakyQuestion) for entry in section.each("flaky")),
            questions={name: questions.read(name, "tuple[str | None, ...]") for name in questions.data},
            series=tuple(series.record(TrendSeries) for series in section.each("series")),
        )


@dataclass(slots=True)
class ReportDocument:
    """The JSON report, typed: its results are `QuestionResult`s; `to_json()` is what the file holds."""

    results: list[QuestionResult]
    aggregates: Aggregates
    gates: list[GateRecord]
    metadata: dict[str, Any]
    comparison: ComparisonSection | None = None
    warnings: list[str] = field(default_factory=list)
    judge_spend: JudgeSpend | None = None
    judge_calibration: dict[str, Any] | None = None  # the judge's agreement with people's labels
    history: HistorySection | None = None  # the earlier runs (`--graphrag-history`)
    references: dict[str, Any] | None = None  # the graph the references were checked against
    format_version: int = REPORT_FORMAT_VERSION
    # The results' records are plain JSON values as a parser read them (`formats.plain_json`), so
    # they may be written again by orjson; not part of the report.
    plain_results: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The report's JSON object, keys in the order every version wrote them."""
        document: dict[str, Any] = {
            "format_version": self.format_version,
            "results": [result.record for result in self.results],
            "aggregates": self.aggregates.to_json(),
            "gates": [gate.to_json() for gate in self.gates],
            "metadata": self.metadata,
        }
        optional = {
            "comparison": None if self.comparison is None else self.comparison.to_json(),
            "warnings": self.warnings or None,
            "judge_spend": None if self.judge_spend is None else self.judge_spend.to_json(),
            "judge_calibration": self.judge_calibration,
            "history": None if self.history is None else self.history.to_json(),
            "references": self.references,
        }
        document.update((name, section) for name, section in optional.items() if section is not None)
        return document

    @property
    def gates_failed(self) -> bool:
        return any(not gate.passed for gate in self.gates)

    @classmethod
    def from_json(cls, data: object, source: str, *, plain: bool = False) -> ReportDocument:
        """A report read from `source` (a file name for messages); `InputError` unless it is one
        of format_version 2 (this one) with well-formed, unique results and gates. `plain`: `data`
        is a plain JSON value as a parser read it (see `plain_results`)."""
        location = SourceLocation(file=source)
        if not isinstance(data, Mapping) or "results" not in data or "format_version" not in data:
            raise InputError(
                "not a pytest-graphrag-eval JSON report (no `format_version` or `results`)", location
            )
        version = data["format_version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise InputError("`format_version` must be an integer", location, "format_version")
        if version < MIN_FORMAT_VERSION:
            raise InputError(
                f"the report was written with report format_version {version}, which records no "
                "per-question outcome; regenerate it with this version of pytest-graphrag-eval "
                f"(format_version {MIN_FORMAT_VERSION} or later)",
                location,
                "format_version",
            )
        results = parse_results(data["results"], source, require_outcome=True)
        gates = data.get("gates", [])
        if not isinstance(gates, list):
            raise _field_error(location, "gates", "a list")

        def optional(name: str, read: Callable[[_Fields], _Section]) -> _Section | None:
            """The section `name` (absent or null: None), read by `read`."""
            return None if data.get(name) is None else read(_Fields(data[name], location, name))

        def plain_object(section: _Fields) -> dict[str, Any]:
            return dict(section.data)

        return cls(
            results=results,
            metadata=optional("metadata", plain_object) or {},
            judge_calibration=optional("judge_calibration", plain_object),
            references=optional("references", plain_object),
            gates=[
                _Fields(gate, location, f"gates[{index}]").record(GateRecord)
                for index, gate in enumerate(gates)
            ],
            warnings=[str(warning) for warning in data.get("warnings") or []],
            format_version=version,
            plain_results=plain,
            aggregates=optional("aggregates", Aggregates.from_json) or Aggregates(),
            comparison=optional("comparison", ComparisonSection.from_json),
            judge_spend=optional("judge_spend", JudgeSpend.from_json),
            history=optional("history", HistorySection.from_json),
        )


def parse_results(records: object, source: str, *, require_outcome: bool) -> list[QuestionResult]:
    """Typed results of a report's `results`; `InputError` naming the file, question and field."""
    if not isinstance(records, list):
        raise InputError("`results` must be a list", SourceLocation(file=source), "results")
    parsed: list[QuestionResult] = []
    seen: set[tuple[str, str]] = set()
    for index, record in enumerate(records):
        if type(record) is not dict and not isinstance(record, Mapping):  # a parser's dicts: no ABC check
            raise InputError(f"results[{index}] is not an object", SourceLocation(file=source), "results")
        try:
            result = QuestionResult.from_record(record)
        except ValueError as error:
            problem = str(error)
            field_name = problem.split("`")[1]
            if problem.startswith("has no"):  # no ids to name the question by: its position does
                raise InputError(
                    f"results[{index}] {problem}", SourceLocation(file=source), field_name
                ) from None
            raise InputError(problem, _where(source, record), field_name) from None
        if require_outcome and result.outcome is None:
            raise InputError(
                f"`outcome` must be one of {', '.join(sorted(OUTCOME_NAMES))}, got None",
                _where(source, record),
                "outcome",
            )
        key = (result.template_id, result.question_id)
        if key in seen:
            raise InputError(
                "the question appears twice in the results", _where(source, record), "question_id"
            )
        seen.add(key)
        parsed.append(result)
    return parsed


def _where(source: str, record: Mapping[str, object]) -> SourceLocation:
    return SourceLocation(
        file=source, template_id=str(record.get("template_id")), question_id=str(record.get("question_id"))
    )
