"""pytest collection nodes: a corpus file, its templates, and one item per question, with node ids
`corpus.yaml::<template_id>::<question_id>` so `-k`, `--lf` and `--deselect` address questions; and a
question item's record for the report: an item cut before its result existed (pytest-timeout, Ctrl-C)
is an agent error with the reason, so it counts in the aggregates and gates instead of vanishing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_graphrag_eval.aggregates import is_metric_value
from pytest_graphrag_eval.compare.hashing import content_hash
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, Template, load_corpus
from pytest_graphrag_eval.errors import CorpusError, GraphragEvalError, SourceLocation
from pytest_graphrag_eval.evaluation import base_result
from pytest_graphrag_eval.formats.json_types import JsonObject, Order
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.gates.thresholds import ThresholdCheck, ThresholdResolver
from pytest_graphrag_eval.gates.verdict import Attempt, failure_lines, judge_question
from pytest_graphrag_eval.llm.limits import not_evaluated_reason
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.report.failure_report import printable, verdict_failure
from pytest_graphrag_eval.report.json_report import ResultCollector
from pytest_graphrag_eval.run.judging import Judging
from pytest_graphrag_eval.run.runner import AnsweredQuestion, QuestionRunner


class ItemSession(Protocol):
    """What the nodes use of the run's session (`session.py`, which imports this module, sets the key)."""

    settings: PluginSettings
    thresholds: ThresholdResolver
    baseline: JsonObject | None
    baseline_name: str | None
    baseline_results: dict[str, JsonObject]  # each question's result in the baseline run, by id
    judging: Judging  # the reviews that decide questions' answers

    @property
    def references_only(self) -> bool: ...

    def register_corpus(self, corpus: Corpus, path: Path) -> CorpusRules: ...

    def outcome_for(self, question: Question, *, rerun: bool = False) -> AnsweredQuestion: ...

    def is_corpus_file(self, path: Path) -> bool: ...


SESSION_KEY: pytest.StashKey[ItemSession] = pytest.StashKey()


class QuestionFailed(Exception):
    """An item's own failure: its text is the whole report, no traceback."""


class CorpusFile(pytest.File):
    """A reference-corpus YAML file."""

    corpus: Corpus
    rules: CorpusRules

    def collect(self) -> Iterator[TemplateCollector]:
        self.corpus = load_corpus(self.path, display_name=_display_path(self))
        self.rules = self.graphrag.register_corpus(self.corpus, self.path)
        for gate in self.rules.gates:
            if gate.needs_baseline and self.graphrag.baseline is None:
                needed = "compares with a baseline run: pass --graphrag-baseline PATH"
            elif gate.needs_history and self.graphrag.settings.history_url is None:
                needed = "looks at earlier runs: pass --graphrag-history URL"
            else:
                continue
            raise CorpusError(
                f"gate {gate.expression} {needed}", SourceLocation(file=self.corpus.file), "gates"
            )
        for template in self.corpus.templates:
            yield TemplateCollector.from_parent(self, name=template.template_id, template=template)

    @property
    def graphrag(self) -> ItemSession:
        return self.config.stash[SESSION_KEY]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, GraphragEvalError):
            return printable(str(excinfo.value))
        return super().repr_failure(excinfo)  # type: ignore[return-value]


class TemplateCollector(pytest.Collector):
    """The questions of one template."""

    def __init__(self, *, template: Template, **kwargs: Any):
        super().__init__(**kwargs)
        self.template = template

    def collect(self) -> Iterator[QuestionItem]:
        corpus_file = self.parent
        assert isinstance(corpus_file, CorpusFile)
        for question in self.template.questions:
            yield QuestionItem.from_parent(
                self,
                name=question.question_id,
                question=question,
                corpus=corpus_file.corpus,
                rules=corpus_file.rules,
            )


class QuestionItem(pytest.Item):
    """One reference question: answered, scored and held against its thresholds."""

    def __init__(self, *, question: Question, corpus: Corpus, rules: CorpusRules, **kwargs: Any):
        super().__init__(**kwargs)
        self.question = question
        self.corpus = corpus
        self.rules = rules
        self.result: dict[str, Any] | None = None
        self.responses: list[dict[str, Any]] = []
        self.checks: list[ThresholdCheck] = []
        self.not_evaluated = False  # the judge budget or a cache-only miss stopped this question's scoring
        if question.xfail:
            self.add_marker(pytest.mark.xfail(reason=question.xfail, strict=False))

    @property
    def graphrag(self) -> ItemSession:
        return self.config.stash[SESSION_KEY]

    def runtest(self) -> None:
        session = self.graphrag
        # pytest-rerunfailures numbers an item's runs: a rerun asks a live agent again
        outcome = session.outcome_for(self.question, rerun=getattr(self, "execution_count", 1) > 1)
        self.responses = [attempt.response for attempt in outcome.attempts or (outcome,) if attempt.response]
        if outcome.problem is not None:
            self.result = outcome.result  # scored despite its problem (a failed reference query): reported
            raise QuestionFailed(f"{self.question.question_id}: {outcome.problem}")
        assert outcome.result is not None
        if session.references_only and outcome.result.get("status") != "success":
            self.result = outcome.result  # reported with its reference check, as skipped
            pytest.skip("references checked only (no --graphrag-responses and no agent hook)")
        thresholds = session.thresholds.for_parsed(
            self.rules.thresholds, self.question.template_id, self.question.question_id
        )
        reviews = session.judging.reviews
        answered = outcome.result.get("status") == "success"  # an agent error has no answer to review
        review = (
            reviews.decide(self.question.question_id, outcome.result.get("actual_answer"))
            if reviews and answered
            else None
        )
        verdict = judge_question(
            outcome.result,
            thresholds,
            attempts=[Attempt(attempt.result, attempt.problem) for attempt in outcome.attempts],
            policy=session.settings.repeat_policy,
            review=review,
        )
        self.result, self.checks = verdict.result, verdict.checks
        attempt_results = [attempt.result for attempt in outcome.attempts if attempt.result is not None]
        unscored = not_evaluated_reason((outcome.result, *attempt_results))
        if unscored is not None:
            # Neither a pass nor a failure: its scores are incomplete, so no threshold is held against it.
            self.not_evaluated, self.checks = True, []
            pytest.skip(unscored)
        baseline = session.baseline_results.get(self.question.question_id)
        _record_properties(self, verdict.result, baseline)
        if not verdict.passed:
            reviewed = f"{review.note()}\n" if review is not None and review.applied else ""
            raise QuestionFailed(
                reviewed
                + verdict_failure(
                    self.question,
                    verdict,
                    session.settings.steps_scope,
                    baseline=baseline,
                    baseline_path=session.baseline_name,
                )
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, (QuestionFailed, GraphragEvalError)):
            return printable(str(excinfo.value))
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.question.location.line
        return (
            self.path,
            (line - 1 if line else None),
            f"{self.question.template_id}::{self.question.question_id}",
        )


def _display_path(node: pytest.Collector) -> str:
    """The corpus path as the user sees it: relative to the rootdir when inside it."""
    try:
        return str(node.path.relative_to(node.config.rootpath))
    except ValueError:
        return str(node.path)


def _record_properties(item: QuestionItem, result: dict[str, Any], baseline: dict[str, Any] | None) -> None:
    """Numeric metrics become JUnit XML properties (`--junitxml`), with their change since the baseline."""
    for key, value in result.items():
        if is_metric_value(key, value):
            item.user_properties.append((f"graphrag.{key}", value))
            before = baseline.get(key) if baseline is not None else None
            if is_metric_value(key, before):
                item.user_properties.append((f"graphrag.delta.{key}", value - before))


def corpus_file_for(parent: pytest.Collector, file_path: Path) -> CorpusFile | None:
    """The collector of a configured corpus file (None for any other file)."""
    session = parent.config.stash.get(SESSION_KEY, None)
    if session is None or not session.is_corpus_file(file_path):
        return None
    return CorpusFile.from_parent(parent, path=file_path)


def question_record(
    result: Mapping[str, object], *, nodeid: str, outcome: str, checks: Sequence[ThresholdCheck]
) -> dict[str, Any]:
    """A question's result plus its verdict, as the report and later baselines keep it."""
    return {
        **result,
        "nodeid": nodeid,
        "outcome": outcome,
        "content_hash": content_hash(result),
        "thresholds": [check.to_dict() for check in checks],
        "failures": failure_lines(result, checks),
    }


def item_outcome(report: pytest.TestReport) -> str:
    """The pytest outcome as people say it: xfail and xpass are told apart from skip and pass."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def question_report_record(item: QuestionItem, report: pytest.TestReport) -> JsonObject:
    """The question's result plus what pytest decided about it, for the report and baselines."""
    assert item.result is not None
    outcome = "not_evaluated" if item.not_evaluated else item_outcome(report)
    return question_record(item.result, nodeid=item.nodeid, outcome=outcome, checks=item.checks)


def numbered_attempts(responses: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What a recording keeps of one question: its response, or every attempt numbered from 1."""
    if len(responses) == 1:
        return {"responses": list(responses)}
    return {"responses": [{**response, "attempt": number} for number, response in enumerate(responses, 1)]}


def cut_reason(when: str, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """Why an item ended before its question had a result, in one line naming what cut it."""
    error = excinfo.value
    message = str(getattr(error, "msg", None) or error).strip().splitlines()
    first = printable(message[0]) if message else ""
    kind = type(error).__name__
    where = "while its item ran" if when == "call" else f"in the item's {when}"
    return f"the question was cut before it was scored ({kind} {where}){': ' + first if first else ''}"


def cut_question_record(item: QuestionItem, reason: str, outcome: str = "failed") -> JsonObject:
    """The report record of a question whose item was cut: an agent error with `reason`."""
    result = {**base_result(item.question, None), "error": reason}
    return question_record(result, nodeid=item.nodeid, outcome=outcome, checks=[])


def collect_finished_unreported(
    session: pytest.Session,
    runner: QuestionRunner,
    collector: ResultCollector,
    order_of: Callable[[QuestionItem], Order],
) -> None:
    """After Ctrl-C: finished questions whose items never reported still go in the report."""
    finished = runner.finished()
    for item in session.items:
        if not isinstance(item, QuestionItem):
            continue
        outcome = finished.get(item.question.question_id)
        order = order_of(item)
        if outcome is not None and outcome.result is not None and order not in collector.results:
            record = question_record(outcome.result, nodeid=item.nodeid, outcome="interrupted", checks=[])
            collector.add(order, {**record, "failures": []})  # scored, but its verdict never came
