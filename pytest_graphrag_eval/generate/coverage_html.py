"""The graph's coverage as one self-contained HTML page (`graphrag-eval-corpus coverage --html`).

Every text from the graph or the corpus (IRIs, template ids) is escaped; the page loads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from pytest_graphrag_eval.generate.coverage import Coverage

_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.2em .8em;"
    "text-align:left}td.n{text-align:right}code{font-size:13px}.none{color:#777}"
)


def coverage_page(coverage: Coverage) -> str:
    """The page: the totals, the untested classes and properties by uses, and a row per template."""
    graph = coverage.graph
    classes, properties = coverage.untested_classes(), coverage.untested_properties()
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f"<title>Graph coverage</title><style>{_STYLE}</style></head><body>",
        "<h1>Graph coverage by the reference queries</h1>",
        f"<p>Reference queries name {len(graph.classes) - len(classes)} of {len(graph.classes)} classes and "
        f"{len(graph.properties) - len(properties)} of {len(graph.properties)} properties of the graph.</p>",
    ]
    for title, terms, uses in (
        ("classes", classes, graph.classes),
        ("properties", properties, graph.properties),
    ):
        parts.append(f"<h2>Untested {title} ({len(terms)})</h2>")
        parts.append(_terms_table(coverage, terms, uses))
    parts.append("<h2>Per template</h2><table><tr><th>template</th><th>classes</th><th>properties</th></tr>")
    for template_id in coverage.per_template:
        tested_classes = len(graph.classes) - len(coverage.untested_classes(template_id))
        tested_properties = len(graph.properties) - len(coverage.untested_properties(template_id))
        parts.append(
            f'<tr><td><code>{escape(template_id)}</code></td><td class="n">{tested_classes}</td>'
            f'<td class="n">{tested_properties}</td></tr>'
        )
    parts.append("</table></body></html>\n")
    return "".join(parts)


def _terms_table(coverage: Coverage, terms: list[str], uses: Mapping[str, int]) -> str:
    if not terms:
        return '<p class="none">none: every one is named by some reference query</p>'
    rows = "".join(
        f'<tr><td><code>{escape(coverage.short(term))}</code></td><td class="n">{uses[term]}</td></tr>'
        for term in terms
    )
    return f"<table><tr><th>term</th><th>uses in the graph</th></tr>{rows}</table>"
