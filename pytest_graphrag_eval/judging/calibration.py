"""Calibrating the judge: each labelled answer is judged by the very metric object the run scores with
(prompt, model, cache, budget), and both verdicts are held to the metric's pass cutoff and compared."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.answers.metric import AnswerInputs, AnswerMetric
from pytest_graphrag_eval.answers.scorers import AnswerJudgeScorer
from pytest_graphrag_eval.judging.agreement import binary_agreement, score_agreement
from pytest_graphrag_eval.judging.labels import CORRECTNESS, Label
from pytest_graphrag_eval.report_model import is_finite_number

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question

DEFAULT_CUTOFF = 0.5
MIN_TEMPLATE_LABELS = 20  # fewer labels say too little about one template's agreement to show it
RECOMMENDED_LABELS = 50  # per metric; the docs and the benchmark's coverage figures use it
_SCORE_KEYS = {CORRECTNESS: "answer_f1"}
_REASON_KEYS = {CORRECTNESS: "answer_correctness_reason"}
_ERROR_NAMES = {"answer_eval_error": CORRECTNESS}


@dataclass(frozen=True)
class JudgedMetric:
    """A metric the run judges with an LLM, as calibration addresses it."""

    name: str  # answer_correctness, answer_relevance, or a custom metric's name
    score_key: str
    metric: AnswerMetric
    judge: str  # e.g. llm:gpt-4o-mini


def judged_metrics(metrics: Sequence[AnswerMetric]) -> dict[str, JudgedMetric]:
    """The LLM-judged ones among the run's answer metrics, by the name labels give them."""
    found = {}
    for metric in metrics:
        if not metric.uses_llm:
            continue
        error_key = metric.error_key
        name = _ERROR_NAMES.get(error_key, error_key.removesuffix("_error"))
        score_key = _SCORE_KEYS.get(name, metric.spread_keys[0] if metric.spread_keys else name)
        found[name] = JudgedMetric(name, score_key, metric, str(getattr(metric, "label", "llm")))
    return found


@dataclass(frozen=True)
class JudgedLabel:
    """A label and the judge's verdict on the same answer (or why there is none)."""

    label: Label
    template_id: str
    score: float | None
    reason: str
    error: str | None


async def judge_labels(
    labels: Sequence[Label],
    questions: Mapping[str, Question],
    metrics: Mapping[str, JudgedMetric],
    repeats: int = 1,
) -> list[JudgedLabel]:
    """Judge every labelled answer with its metric, concurrently (the judge client bounds it)."""
    scorers = {name: AnswerJudgeScorer([metric.metric], repeats) for name, metric in metrics.items()}

    async def one(label: Label) -> JudgedLabel:
        question = questions[label.question_id]
        metric = metrics[label.metric]
        inputs = AnswerInputs(question.question_text, question.reference_answer, label.answer)
        if not metric.metric.applies(inputs):
            return JudgedLabel(
                label,
                question.template_id,
                None,
                "",
                f"{metric.name} needs more than a question, its reference and an answer "
                "(steps?): it cannot judge a label",
            )
        keys = await scorers[label.metric].score_inputs(inputs)
        score = keys.get(metric.score_key)
        return JudgedLabel(
            label,
            question.template_id,
            float(score) if is_finite_number(score) else None,
            _reason(keys, metric.name),
            keys.get(metric.metric.error_key) if score is None else None,
        )

    return list(await asyncio.gather(*(one(label) for label in labels)))


def summarise(
    judged: Sequence[JudgedLabel], metric: JudgedMetric, cutoff: float, level: float = 0.95
) -> dict[str, Any]:
    """One metric's agreement section: counts, accuracy, kappa, alpha, confusion, disagreements."""
    mine = [item for item in judged if item.label.metric == metric.name]
    scored = [item for item in mine if item.score is not None]
    summary: dict[str, Any] = {
        "judge": metric.judge,
        "score_key": metric.score_key,
        "cutoff": cutoff,
        "labels": len(mine),
        "judged": len(scored),
        "from_reviews": sum(1 for item in mine if item.label.source.startswith("review at ")),
        **_binary(scored, cutoff, level),
    }
    with_scores = [item for item in scored if item.label.score is not None]
    if len(with_scores) >= 2:
        summary.update(
            score_agreement(
                [(item.label.score or 0.0, item.score or 0.0) for item in with_scores], level
            ).to_dict()
        )
    summary["disagreements"] = [
        _disagreement(item, cutoff)
        for item in scored
        if item.label.passes(cutoff) != _judge_passes(item, cutoff)
    ]
    summary["errors"] = [
        {
            "question_id": item.label.question_id,
            "source": item.label.source,
            "error": item.error or "no score",
        }
        for item in mine
        if item.score is None
    ]
    templates: dict[str, list[JudgedLabel]] = {}
    for item in scored:
        templates.setdefault(item.template_id, []).append(item)
    summary["per_template"] = {
        template_id: {"labels": len(items), **_binary(items, cutoff, level)}
        for template_id, items in sorted(templates.items())
        if len(items) >= MIN_TEMPLATE_LABELS
    }
    return summary


def calibration_section(
    judged: Sequence[JudgedLabel],
    metrics: Mapping[str, JudgedMetric],
    cutoffs: Mapping[str, float],
    *,
    labels_file: str | None,
    level: float = 0.95,
) -> dict[str, Any]:
    """The report's `judge_calibration` section: one summary per metric that has labels."""
    labelled = sorted({item.label.metric for item in judged})
    return {
        "labels_file": labels_file,
        "level": level,
        "recommended_labels": RECOMMENDED_LABELS,
        "metrics": {
            name: summarise(judged, metrics[name], cutoffs.get(name, DEFAULT_CUTOFF), level)
            for name in labelled
        },
    }


def _binary(items: Sequence[JudgedLabel], cutoff: float, level: float) -> dict[str, Any]:
    agreement = binary_agreement(
        [(item.label.passes(cutoff), _judge_passes(item, cutoff)) for item in items], level
    )
    section: dict[str, Any] = {
        "accuracy": agreement.accuracy,
        "kappa": agreement.kappa,
        "kappa_interval": asdict(agreement.interval) if agreement.interval else None,
        "confusion": asdict(agreement.confusion),
    }
    if agreement.undefined:
        section["kappa_undefined"] = agreement.undefined
    return section


def _judge_passes(item: JudgedLabel, cutoff: float) -> bool:
    return item.score is not None and item.score >= cutoff


def _disagreement(item: JudgedLabel, cutoff: float) -> dict[str, Any]:
    label = item.label
    return {
        "question_id": label.question_id,
        "template_id": item.template_id,
        "answer_fingerprint": label.fingerprint,
        "person": "pass" if label.passes(cutoff) else "fail",
        "person_score": label.score,
        "by": label.by,
        "person_reason": label.reason,
        "judge": "pass" if _judge_passes(item, cutoff) else "fail",
        "judge_score": item.score,
        "judge_reason": item.reason,
        "source": label.source,
    }


def _reason(keys: Mapping[str, Any], name: str) -> str:
    known = _REASON_KEYS.get(name)
    if known is not None:
        return str(keys.get(known) or "")
    return next(
        (str(value) for key, value in keys.items() if key.endswith("reason") and isinstance(value, str)), ""
    )
