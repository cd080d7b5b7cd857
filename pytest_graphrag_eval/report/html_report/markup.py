"""The markup a page repeats by the thousand, written in Python rather than in the Jinja templates.

In Jinja these rows, bars and histograms took two thirds of a 10,000-question page's render time.
Every value that may hold markup goes through markupsafe's `escape` (links through Jinja's
`urlencode`), so the page is byte for byte the one the templates wrote."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from jinja2.filters import do_urlencode
from markupsafe import Markup, escape

from pytest_graphrag_eval.report.html_report.charts import (
    HIST_HEIGHT,
    HIST_WIDTH,
    Histogram,
    fmt,
    percent,
    signed,
)
from pytest_graphrag_eval.report.html_report.model import DeltaRow, ReportView

_ScoreDeltas = Sequence[tuple[str, object, object, float]]  # (metric, baseline, current, delta)
# A histogram's fixed coordinates, written as the template's arithmetic wrote them.
_VIEW_HEIGHT = HIST_HEIGHT + 16
_AXIS_Y = HIST_HEIGHT + 0.5
_TICK_Y = HIST_HEIGHT + 13
_BAR_SVG = 'preserveAspectRatio="none" aria-hidden="true"'
_OUTCOME_ORDER = ("passed", "xpassed", "xfailed", "skipped", "interrupted", "unknown", "failed", "error")


def delta_row(row: DeltaRow, style: str) -> Markup:
    """One row of a change table: baseline, current, delta and its bar with the interval, p, pairs;
    `style` "pct" for the outcome row, in percent and percentage points."""
    stats, bar = row.stats, row.bar
    pct = style == "pct"
    tone = "flat" if row.neutral else bar.direction
    # `percent` and `signed` write numbers (anything else raises): nothing to escape, nor in `_number`'s
    baseline = percent(stats.get("baseline_pass_rate")) if pct else _number(stats.get("baseline"))
    current = percent(stats.get("current_pass_rate")) if pct else _number(stats.get("current"))
    delta = signed(stats.get("delta"), style)
    scale = _number(row.scale)
    parts = [
        f'<tr class="{"sig" if row.significant else ""} {tone}">\n'
        f'  <th scope="row">{escape(row.label)}</th>\n'
        f'  <td class="num">{baseline}</td>\n'
        f'  <td class="num">{current}</td>\n'
        f'  <td class="num delta {tone}">{delta}</td>\n'
        '  <td class="chart-col"><svg class="dbar" viewBox="0 0 200 14" preserveAspectRatio="none"'
        f' role="img" aria-label="axis ±{scale}"><title>axis ±{scale}</title>\n'
        f'    <rect class="bar {tone}{" sig" if row.significant else ""}" x="{bar.bar_start * 200}" y="3"'
        f' width="{max((bar.bar_end - bar.bar_start) * 200, 0.8)}" height="8"/>\n'
    ]
    if bar.ci_start is not None:
        low, high = str(bar.ci_start * 200), str(cast(float, bar.ci_end) * 200)  # each written three times
        parts.append(
            f'    <line class="ci" x1="{low}" x2="{high}" y1="7" y2="7"/>\n'
            f'    <line class="ci" x1="{low}" x2="{low}" y1="3" y2="11"/>\n'
            f'    <line class="ci" x1="{high}" x2="{high}" y1="3" y2="11"/>\n'
        )
    zero = str(bar.zero * 200)
    parts.append(f'    <line class="zero" x1="{zero}" x2="{zero}" y1="0" y2="14"/>\n')
    parts.append('  </svg></td>\n  <td class="num muted">')
    if stats.get("ci_low") is not None:
        parts.append(f"[{signed(stats.get('ci_low'), style)}, {signed(stats.get('ci_high'), style)}]")
    parts.append(
        "</td>\n"
        f'  <td class="num">{_number(stats.get("p_value"))}</td>\n'
        f'  <td class="num">{_value(stats.get("n_pairs", ""))}</td>\n'
        f'  <td class="num muted">{_number(stats.get("min_detectable_delta"))}</td>\n'
        "</tr>\n"
    )
    return Markup("".join(parts))


def histograms(charts: Mapping[str, Histogram]) -> Markup:
    """A metric's card's charts, a blank line after each but the last (the template's line ends it):
    every question's (template "") and each template's, hidden; nothing to escape but the template ids,
    their other texts are counts and numbers."""
    parts: list[str] = []
    written: dict[int, str] = {}  # `charts._bars` hands equal bars out as one tuple: each is written once
    for template, chart in charts.items():
        parts.append(
            f'        <div class="hist" data-template="{escape(template)}"{" hidden" if template else ""}>\n'
            f'  <svg viewBox="0 0 {HIST_WIDTH} {_VIEW_HEIGHT}" role="img"'
            f' aria-label="histogram: {chart.count} values">\n'
            f'    <line class="axis" x1="0" y1="{_AXIS_Y}" x2="{HIST_WIDTH}" y2="{_AXIS_Y}"/>\n'
        )
        bars = written.get(id(chart.bins))
        if bars is None:
            bars = written[id(chart.bins)] = "".join(
                f'    <rect class="bin" x="{bin.x}" y="{bin.y}" width="{bin.width}" height="{bin.height}">'
                f"<title>{bin.label}</title></rect>\n"
                for bin in chart.bins
                if bin.count
            )
        parts.append(bars)
        parts.append(
            f'    <text class="tick" x="0" y="{_TICK_Y}">{chart.low_label}</text>\n'
            f'    <text class="tick" x="{HIST_WIDTH}" y="{_TICK_Y}" text-anchor="end">'
            f"{chart.high_label}</text>\n"
            f'    <text class="tick" x="2" y="10">{chart.peak}</text>\n'
            "  </svg>\n"
            f'  <p class="hist-stats">n {chart.count} · mean {fmt(chart.mean)}'
        )
        if chart.missing:
            parts.append(f' · <span class="warn-text">{chart.missing} without a value</span>')
        parts.append("</p>\n</div>\n\n")
    return Markup("".join(parts)[:-1])


def changed_questions(items: Sequence[Mapping[str, object]], pill: Markup) -> Markup:
    """The entries of the regressed or the fixed list (`pill` says which), one `<li>` each, a line
    apart: link, id, template, question text and changed scores."""
    return Markup(
        "\n        ".join(
            f'<li><a href="#q={escape(do_urlencode(cast(str, item["link"])))}">{pill}'
            f" <b>{escape(item.get('question_id'))}</b></a>\n"
            f'          <span class="muted">{escape(item.get("template_id", ""))}</span>\n'
            f'          <div class="sub">{escape(item["question_text"])}</div>\n'
            f'          <div class="sub">{score_changes(cast(_ScoreDeltas, item["score_deltas"]))}</div>\n'
            "        </li>"
            for item in items
        )
    )


def score_changes(deltas: _ScoreDeltas) -> Markup:
    """A regressed or fixed question's changed scores: "metric before → after", coloured by direction."""
    return Markup(
        "".join(
            f'<span class="delta {"down" if delta < 0 else "up"}">'
            f"{escape(metric)} {_number(before)} → {_number(after)}</span> "
            for metric, before, after, delta in deltas
        )
    )


def template_rows(view: ReportView) -> Markup:
    """The overview's table body, a row per template: its outcomes in one stacked bar (counts: nothing
    to escape) and the means of its scores."""
    rows = []
    for index, row in enumerate(view.templates):
        template, outcomes, total = escape(row.template_id), row.outcomes, row.questions
        shown = [name for name in _OUTCOME_ORDER if outcomes.get(name)]
        title = ", ".join([f"{outcomes[name]} {name}" for name in shown])
        rows.append(
            f'      <tr data-template="{template}">\n'
            f'        <td class="tid"><a href="#questions" data-filter-template="{index}" title="{template}">'
            f'{template}</a></td>\n        <td class="num">{total}</td>\n'
            f'        <td><span class="obar" title="{title}"><svg viewBox="0 0 100 8" {_BAR_SVG}>\n'
        )
        start = 0.0
        for name in shown:
            width = 100 * outcomes[name] / total
            kind = "answered" if name == "unknown" and not view.has_outcomes else name
            rows.append(f'<rect class="o-{kind}" x="{start:.2f}" width="{width:.2f}" height="8"/>\n')
            start += width
        answered = outcomes.get("passed", 0) if view.has_outcomes else total - outcomes.get("error", 0)
        bars = [
            score_bar(row.means[name], view.verdict(row.template_id, name)) for name in view.overview_metrics
        ]
        rows.append(f'</svg><span class="obar-text">{answered}/{total}</span></span>\n</td>\n<td>')
        rows.append(f"{'</td><td>'.join(bars)}</td>      </tr>\n")
    return Markup("".join(rows))


def score_bar(value: float | None, verdict: bool | None = None) -> Markup:
    """A mean as a bar and a number in the overview's table; green or red only for a gated mean."""
    if value is None:
        return Markup('<span class="muted">–</span>')
    tone = "" if verdict is None else " pass" if verdict else " fail"
    gate = (", gate passed" if verdict else ", gate failed") if tone else ""
    data_verdict = f' data-verdict="{tone[1:]}"' if tone else ""
    return Markup(
        f'<span class="score{tone}" title="{_number(value, 4)}{gate}"'
        f' data-value="{_value(value)}"{data_verdict}>'
        '<svg class="sbar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">'
        '<rect class="track" width="100" height="8" rx="2"/>'
        f'<rect class="fill{tone}" width="{"%.1f" % (value * 100)}" height="8" rx="2"/></svg>'
        f'<span class="score-value">{_number(value)}</span></span>\n'
    )


def _number(value: object, digits: int = 3) -> str:
    """`fmt(value)`, escaped: a float's or an integer's text has nothing to escape, anything else may."""
    text = fmt(value, digits)
    return text if value is None or type(value) in _NUMBERS else escape(text)


def _value(value: object) -> str:
    """`escape(value)` as text, a float or an integer written as is (its text has nothing to escape)."""
    return str(value) if type(value) in _NUMBERS else escape(value)


_NUMBERS = frozenset({float, int})
