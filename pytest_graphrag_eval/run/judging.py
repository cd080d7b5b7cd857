"""The run's labels, reviews and calibration, for the plugin and `graphrag-eval-judge`: the labelled
answers are judged before any question is, so a judge that disagrees with people is known first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.answers.scorers import build_answer_metrics
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.gates.judge_gates import evaluate_judge_gate
from pytest_graphrag_eval.gates.model import JUDGE, Gate, GateResult
from pytest_graphrag_eval.gates.thresholds import Threshold
from pytest_graphrag_eval.judging.calibration import (
    DEFAULT_CUTOFF,
    JudgedMetric,
    calibration_section,
    judge_labels,
    judged_metrics,
)
from pytest_graphrag_eval.judging.labels import Label, load_labels, merged_labels
from pytest_graphrag_eval.judging.reviews import ReviewBook, load_reviews
from pytest_graphrag_eval.llm.event_loop import run_coroutine

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers.settings import AnswerSettings
    from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
    from pytest_graphrag_eval.llm.judge import Judge


@dataclass
class Judging:
    """A run's reviews, its labels (the file's, then the reviews'), and its calibration once made."""

    reviews: ReviewBook = field(default_factory=ReviewBook)
    labels: list[Label] = field(default_factory=list)
    labels_file: str | None = None
    questions: Mapping[str, Question] = field(default_factory=dict)
    calibration: dict[str, Any] | None = None

    @property
    def calibrates(self) -> bool:
        return self.labels_file is not None


def questions_of(corpora: Iterable[Corpus]) -> dict[str, Question]:
    return {question.question_id: question for corpus in corpora for question in corpus.questions()}


def metric_names(answers: AnswerSettings) -> list[str]:
    """The names labels give the metrics `answers` judges with an LLM (no client needed to say)."""
    names = []
    if answers.judge == "llm":
        names.append("answer_correctness")
    if answers.relevance:
        names.append("answer_relevance")
    names.extend(spec.name for spec in answers.custom_metrics)
    return names


def load_judging(
    *,
    labels_path: Path | None,
    reviews_path: Path | None,
    shown: Any,
    questions: Mapping[str, Question],
    answers: AnswerSettings,
) -> Judging:
    """Read the labels and reviews files asked for; every problem names the file and line."""
    names = metric_names(answers)
    reviews = (
        load_reviews(reviews_path, shown=shown(reviews_path), question_ids=questions, metrics=names)
        if reviews_path is not None
        else ReviewBook()
    )
    if labels_path is None:
        return Judging(reviews, questions=questions)
    shown_labels = shown(labels_path)
    labels = load_labels(labels_path, shown=shown_labels, question_ids=questions, metrics=names)
    from_reviews = [label for label in reviews.labels() if label.metric in names]
    return Judging(reviews, merged_labels(labels, from_reviews), shown_labels, questions)


def cutoffs(
    metrics: Mapping[str, JudgedMetric], thresholds: Sequence[Mapping[str, Threshold | None]]
) -> dict[str, float]:
    """Each metric's pass cutoff: the first threshold `>=`/`>` on its score key, else 0.5."""
    found = {}
    for name, metric in metrics.items():
        found[name] = DEFAULT_CUTOFF
        for layer in thresholds:
            threshold = layer.get(metric.score_key)
            if threshold is not None and threshold.op in (">=", ">"):
                found[name] = threshold.limit
                break
    return found


def calibrate(
    judging: Judging,
    answers: AnswerSettings,
    client: Judge,
    thresholds: Sequence[Mapping[str, Threshold | None]] = (),
    level: float = 0.95,
) -> dict[str, Any]:
    """Judge the labelled answers on `client` and return the report's `judge_calibration` section."""
    metrics = judged_metrics(build_answer_metrics(answers, client))
    missing = sorted({label.metric for label in judging.labels} - set(metrics))
    if missing:
        raise ConfigurationError(f"labels of {missing[0]}, which this run does not judge with an LLM")

    async def judged() -> Any:
        try:
            return await judge_labels(judging.labels, judging.questions, metrics, answers.repeats)
        finally:
            aclose = getattr(client, "aclose", None)
            if aclose is not None:
                await aclose()  # this loop's connections; the client stays usable on the run's loop

    section = calibration_section(
        run_coroutine(judged()),
        metrics,
        cutoffs(metrics, thresholds),
        labels_file=judging.labels_file,
        level=level,
    )
    judging.calibration = section
    return section


def plan_line(judging: Judging, answers: AnswerSettings) -> str:
    """The dry run's line: how many judge calls calibrating would make (at most; the cache may hold some)."""
    return (
        f"judge calibration: {len(judging.labels)} labelled answers x {answers.repeats} repeat(s) "
        f"= up to {len(judging.labels) * answers.repeats} judge calls ({judging.labels_file})"
    )


def judge_gate_results(gates: Iterable[Gate], section: Mapping[str, Any] | None) -> list[GateResult]:
    """The `judge:` gates held to the calibration now, before any question is judged."""
    return [evaluate_judge_gate(gate, section, gate.expression) for gate in gates if gate.over == JUDGE]
