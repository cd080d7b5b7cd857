"""The page `graphrag-eval-corpus coverage --html` writes, under the report's Content-Security-Policy
that allows no request."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

from pytest_graphrag_eval.report.html_report.graph_coverage import GRAPH_COVERAGE_KEY, coverage_view
from pytest_graphrag_eval.report.html_report.render import template_environment

_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.2em .8em;"
    "text-align:left}.num{text-align:right}code{font-size:13px}.muted{color:#777}"
)


def coverage_page(section: Mapping[str, object]) -> str:
    """The whole page for the coverage's JSON form (`Coverage.to_dict`)."""
    view = coverage_view({GRAPH_COVERAGE_KEY: dict(section)})
    digest = base64.b64encode(hashlib.sha256(_STYLE.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    page = template_environment().get_template("graph_coverage_page.html.j2")
    return page.render(coverage=view, style=_STYLE, csp=csp)
