"""render_markdown(): a GitHub-flavoured Markdown summary of a JSON report, for $GITHUB_STEP_SUMMARY.

The report holds untrusted text (question texts, agent answers, ids from the
corpus). Every such value goes through `escape_text`, which keeps it on one line
and escapes only what could start markup in a table cell or a line of text: a
cell separator, HTML, code, emphasis, links and images, math, and GitHub's
mentions and bare-URL links (an invisible word joiner breaks those). Everything
else stays as written, so the file also reads as plain text in a terminal or a
CI log (`2026-11-23T23:37:43Z`, `steps_score`, `answer_f1.mean>=0.9`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from pytest_graphrag_eval.report.history_summary import FLAKY_MARK, flaky_markdown
from pytest_graphrag_eval.report.judge_spend import spend_lines
from pytest_graphrag_eval.report.judging_summary import calibration_markdown, reviews_markdown
from pytest_graphrag_eval.report.run_coverage import RunCoverage
from pytest_graphrag_eval.report_model import (
    CHANGE_LISTS,
    PASSING,
    Aggregates,
    Classification,
    ComparisonSection,
    GateRecord,
    MetricChange,
    MetricDelta,
    Outcome,
    QuestionChange,
    QuestionResult,
    ReportDocument,
    compared_not_evaluated_text,
    outcome_counts,
)
from pytest_graphrag_eval.result_keys import CATALOGUE

MAIN_METRICS = (
    "steps_score",
    "answer_f1",
    "answer_recall",
    "answer_precision",
    "answer_relevance",
    "answer_token_f1",
    "answer_exact_match",
)
_QUESTION_TEXT_LIMIT = 80
_WHY_LIMIT = 200
_CHANGES_PER_QUESTION = 4
_TEMPLATE_METRICS = 4  # score columns of the per-template table, so it fits a page
# Characters that start markup anywhere in a line: a backslash escape, code, emphasis, HTML and
# autolinks, strikethrough, math, the cell separator.
_STARTS_MARKUP = re.compile(r"([\\`*<~$|])")
# A link or image is `[text](url)` or `[text][label]`: escaping the `]` before `(` or `[` unmakes it,
# and keeps `[-0.2, 0.1]` as written (a `[label]` alone needs a definition, which starts a line).
_LINK_TEXT_END = re.compile(r"\](?=[(\[])")
# `_` emphasises only where it is not inside a word (`steps_score` stays as it is).
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# An entity reference (`&lt;`, `&#60;`) would become the character it names.
_ENTITY = re.compile(r"&(?=#?\w+;)")
# GitHub links @mentions, bare URLs, www. addresses and e-mail addresses in text: a word joiner
# (U+2060, invisible and zero-width) after such an `@`, in `://` and after `www` keeps them text
# (`ndcg@5` is neither a mention nor an address and stays as it is).
_GITHUB_AUTOLINK = re.compile(r"(?<!\w)@(?=\w)|@(?=[\w.+-]+\.\w)|:(?=//)|www(?=\.)", re.IGNORECASE)
_WORD_JOINER = "\u2060"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def render_markdown(document: ReportDocument, *, max_regressions: int = 10) -> str:
    """The summary: run counts, main aggregates, gates, and the changes since the baseline."""
    results, gates, comparison = document.results, document.gates, document.comparison
    coverage = RunCoverage.from_metadata(document.metadata)
    flaky = document.history.flaky_ids if document.history is not None else frozenset()
    sections = [
        _title(results, gates),
        _run_counts(results, document.metadata),
        _partial(coverage, gated=bool(gates), interrupted=document.metadata.get("interrupted") is True),
        "\n".join(f"- {escape_text(line)}" for line in spend_lines(document.judge_spend)),
        _aggregates(document.aggregates),
        _per_template(results, document.aggregates),
        calibration_markdown(document.judge_calibration, escape_text),
        _gates(gates, coverage),
        reviews_markdown([result.record for result in results if "review" in result.record], escape_text),
        _failed_questions(results, max_regressions),
        _changes(comparison, results, max_regressions, flaky) if comparison is not None else "",
        flaky_markdown(document, escape_text),
    ]
    return "\n\n".join(section for section in sections if section) + "\n"


def escape_text(value: object, limit: int | None = None) -> str:
    """One line of literal text for a table cell or a sentence: whitespace collapsed, markup escaped."""
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    text = _ENTITY.sub("&amp;", text)
    text = _STARTS_MARKUP.sub(r"\\\1", text)
    text = _LINK_TEXT_END.sub(r"\\]", text)
    text = _EMPHASIS_UNDERSCORE.sub(r"\\_", text)
    return _GITHUB_AUTOLINK.sub(lambda match: match.group(0) + _WORD_JOINER, text)


def _title(results: Sequence[QuestionResult], gates: Sequence[GateRecord]) -> str:
    failed = any(result.outcome is Outcome.FAILED for result in results) or any(
        not gate.passed for gate in gates
    )
    return f"## {'❌' if failed else '✅'} GraphRAG evaluation"


def _run_counts(results: Sequence[QuestionResult], metadata: Mapping[str, object]) -> str:
    # The vocabulary of every summary; an interrupted question (scored, no verdict) is said once, in the
    # run's own line, not counted here.
    parts = outcome_counts(results, without=(Outcome.INTERRUPTED,))
    line = f"**{len(results)} questions**" + (f": {', '.join(parts)}" if parts else "")
    details = [
        f"{label} {escape_text(metadata[key])}"
        for key, label in (("started_at", "started"), ("duration_sec", "duration (s)"), ("judge", "judge"))
        if metadata.get(key) is not None
    ]
    return line + (f" ({', '.join(details)})" if details else "")


def _aggregates(aggregates: Aggregates) -> str:
    statistics = aggregates.micro.statistics if aggregates.micro is not None else {}
    metrics = _ordered_metrics(metric for metric, stats in statistics.items() if "mean" in stats)
    rows = [
        [escape_text(metric), *(_number(statistics[metric].get(stat)) for stat in ("mean", "min", "max"))]
        for metric in metrics
    ]
    return (
        "### Aggregates (all questions)\n\n" + _table(["Metric", "Mean", "Min", "Max"], rows) if rows else ""
    )


def _per_template(results: Sequence[QuestionResult], aggregates: Aggregates) -> str:
    """One row per template (in the order of the results): its outcomes and the means of the main scores."""
    if aggregates.micro is None or aggregates.per_template is None or not results:
        return ""
    metrics = _ordered_metrics(aggregates.micro.statistics)[:_TEMPLATE_METRICS]
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(result.template_id, []).append(result)
    tallies = {template: Counter(result.outcome for result in group) for template, group in groups.items()}
    seen = set().union(*tallies.values())
    counted = ["Questions"]
    if seen - {None}:  # a report pytest did not write has no outcomes
        counted += ["Passed", "Failed"]
    if Outcome.NOT_EVALUATED in seen:
        counted.append("Not evaluated")
    counted.append("Agent errors")
    rows = []
    for template_id, group in groups.items():
        stats, outcomes = aggregates.per_template.get(template_id), tallies[template_id]
        column = {
            "Questions": len(group),
            "Passed": sum(outcomes[outcome] for outcome in PASSING),
            "Failed": outcomes[Outcome.FAILED],
            "Not evaluated": outcomes[Outcome.NOT_EVALUATED],
            "Agent errors": sum(result.agent_error is not None for result in group),
        }
        rows.append(
            [
                escape_text(template_id),
                *(str(column[name]) for name in counted),
                *(_number(stats.stat(metric, "mean") if stats is not None else None) for metric in metrics),
            ]
        )
    header = ["Template", *counted, *(f"{escape_text(metric)} (mean)" for metric in metrics)]
    return "### Per template\n\n" + _table(header, rows)


def _partial(coverage: RunCoverage | None, *, gated: bool, interrupted: bool) -> str:
    """A partial run says so under its counts: how many of how many, and what the gates saw."""
    if coverage is None:
        return ""
    lines = coverage.lines(gated=gated, gates_deferred=False)
    marker = "⚠️ **Interrupted** " if interrupted else "⚠️ "
    return marker + "; ".join(escape_text(line) for line in lines) + "."


def _gates(gates: Sequence[GateRecord], coverage: RunCoverage | None = None) -> str:
    rows = [
        [
            escape_text(gate.expression or gate.gate or "?"),
            "✅ pass" if gate.passed else "❌ fail",
            _number(gate.actual),
            escape_text(gate.message, 120),
        ]
        for gate in gates
    ]
    if not rows:
        return ""
    title = f"### Gates ({coverage.gates_note()})" if coverage is not None else "### Gates"
    return title + "\n\n" + _table(["Gate", "Result", "Actual", "Detail"], rows)


def _failed_questions(results: Sequence[QuestionResult], most: int) -> str:
    """The failed questions and why (their first failure, or the agent's error), baseline or not."""
    failed = [result for result in results if result.outcome is Outcome.FAILED]
    if not failed or most <= 0:
        return ""
    rows = []
    for result in failed[:most]:
        failures = result.record.get("failures")
        if result.agent_error is not None:
            why = f"agent error: {result.agent_error}"
        elif isinstance(failures, list) and failures:
            why = "; ".join(str(line) for line in failures[:2])
        else:
            why = "; ".join(f"{key}: {value}" for key, value in result.scorer_errors.items()) or "–"
        nodeid = result.record.get("nodeid") or f"{result.template_id}::{result.question_id}"
        rows.append([escape_text(nodeid), escape_text(why, _WHY_LIMIT)])
    return _first_rows("### Failed questions", len(failed), ["Test", "Why"], rows, "failed questions")


def _changes(
    comparison: ComparisonSection,
    results: Sequence[QuestionResult],
    max_regressions: int,
    flaky: Collection[str] = (),
) -> str:
    # The lists between the regressions (said in bold) and the questions not evaluated (said last).
    counts = ", ".join(
        f"{len(comparison.ids(classification))} {classification.value}"
        for _, classification in CHANGE_LISTS[1:-1]
    )
    not_evaluated = comparison.ids(Classification.NOT_EVALUATED)
    if not_evaluated:
        by_id = {result.question_id: result.record for result in results}
        counts += ", " + compared_not_evaluated_text(not_evaluated, by_id)
    baseline = comparison.baseline
    origin = escape_text(baseline.path or "the baseline")
    if baseline.started_at:
        origin += f" ({escape_text(baseline.started_at)})"
    head = (
        f"### Changes since the baseline\n\nCompared with {origin}: **{len(comparison.regressions)} "
        f"regressed**, {counts}. Edited questions are left out of the paired statistics."
    )
    parts = (head, _change_table(comparison), _worst_regressions(comparison, results, max_regressions, flaky))
    return "\n\n".join(part for part in parts if part)


def _change_table(comparison: ComparisonSection) -> str:
    rows = [_change_row("pass rate", comparison.outcomes)] if comparison.outcomes.n_pairs else []
    rows += [
        _change_row(escape_text(metric), comparison.metrics[metric])
        for metric in _ordered_metrics(comparison.metrics)
    ]
    level = f"{comparison.confidence:.0%}"
    header = ["Metric", "Baseline", "Current", "Δ", f"{level} interval", "p", "Test", "n", "Detectable Δ"]
    return _table(header, rows) if rows else ""


def _change_row(label: str, change: MetricChange) -> list[str]:
    interval = f"{_signed(change.ci_low)} … {_signed(change.ci_high)}" if change.ci_low is not None else "–"
    return [
        label,
        _number(change.baseline),
        _number(change.current),
        _signed(change.delta),
        interval,
        _number(change.p_value),
        escape_text(change.test),
        _number(change.n_pairs),
        "none" if change.undetectable else _number(change.min_detectable_delta),
    ]


def _worst_regressions(
    comparison: ComparisonSection,
    results: Sequence[QuestionResult],
    max_regressions: int,
    flaky: Collection[str] = (),
) -> str:
    regressed = [
        question for question in comparison.questions if question.classification is Classification.REGRESSED
    ]
    if not regressed or max_regressions <= 0:
        return ""
    by_key = {result.key: result for result in results}
    regressed.sort(key=lambda question: _severity(question, by_key.get(question.key)))
    rows = []
    for question in regressed[:max_regressions]:
        found = by_key.get(question.key)
        result = found.record if found is not None else {}
        nodeid = question.nodeid or result.get("nodeid") or f"{question.template_id}::{question.question_id}"
        rows.append(
            [
                escape_text(nodeid) + (f" {FLAKY_MARK}" if question.question_id in flaky else ""),
                escape_text(result.get("question_text") or "", _QUESTION_TEXT_LIMIT),
                " → ".join(
                    escape_text(side) for side in (question.baseline_outcome, question.current_outcome)
                ),
                _metric_moves(question.deltas),
            ]
        )
    header = ["Test", "Question", "Outcome", "Changes (old → new)"]
    return _first_rows("#### Worst regressions", len(regressed), header, rows, "regressed questions")


def _severity(question: QuestionChange, result: QuestionResult | None) -> float:
    """Most negative first: an agent error, then the sum of the drops of the main metrics."""
    if result is not None and result.agent_error is not None:
        return float("-inf")
    return sum(
        min(0.0, question.deltas[metric]["delta"]) for metric in MAIN_METRICS if metric in question.deltas
    )


def _metric_moves(deltas: Mapping[str, MetricDelta]) -> str:
    moves = [
        f"{escape_text(metric)} {_number(deltas[metric]['baseline'])} → {_number(deltas[metric]['current'])}"
        for metric in _ordered_metrics(deltas)
        if deltas[metric]["delta"]
    ]
    shown = moves[:_CHANGES_PER_QUESTION]
    return "; ".join(shown) + (f"; +{len(moves) - len(shown)} more" if len(moves) > len(shown) else "") or "–"


def _ordered_metrics(names: Iterable[str]) -> list[str]:
    """Main metrics first in a fixed order, then the other quality metrics by name; usage left out."""
    names = [name for name in names if CATALOGUE.role(name) == "score"]
    main = [metric for metric in MAIN_METRICS if metric in names]
    return main + sorted(name for name in names if name not in MAIN_METRICS)


def _first_rows(
    title: str, total: int, header: Sequence[str], rows: Sequence[Sequence[str]], what: str
) -> str:
    """A table of the first `rows` of `total`, its title counting them and a last line the others."""
    more = total - len(rows)
    table = f"{title} ({len(rows)} of {total})\n\n{_table(header, rows)}"
    return table + (f"\n\n… and {more} more {what}." if more > 0 else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3g}" if abs(value) < 0.001 and value != 0 else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"
