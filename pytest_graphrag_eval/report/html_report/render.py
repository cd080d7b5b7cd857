"""Render a JSON report as one self-contained HTML file and write it atomically.

Autoescaping is on and data travels in JSON script blocks through `tojson`, so an agent answer
holding `</script>` stays data; script and style are pinned by hash in a CSP allowing no request.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

try:  # the `speed` extra: zlib-ng deflates the drill-downs in under half of zlib's time, to the same size
    from zlib_ng import gzip_ng

    GZIP_WRITER: type[gzip.GzipFile] = gzip_ng.GzipNGFile  # a GzipFile whose deflate is zlib-ng's
except ImportError:
    GZIP_WRITER = gzip.GzipFile

from pytest_graphrag_eval.formats.atomic import write_bytes_atomic
from pytest_graphrag_eval.formats.plain_json import compact_plain
from pytest_graphrag_eval.report.html_report import markup
from pytest_graphrag_eval.report.html_report.charts import fmt, percent, signed
from pytest_graphrag_eval.report.html_report.graph_coverage import GRAPH_COVERAGE_KEY, coverage_view
from pytest_graphrag_eval.report.html_report.model import build_view
from pytest_graphrag_eval.report_model import ReportDocument

_DEFLATE_BLOCK = 1 << 20  # the pieces the compressor is given (`pack_lines`)
_BETWEEN_DETAILS = b'},{"question_text":'  # the end of a drill-down and the start of the next
# The drill-downs' and `tojson`'s JSON: compact, non-ASCII as is, no NaN (JSON.parse refuses it).
_JSON_OPTIONS: dict[str, Any] = dict(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
_DETAIL_ENCODER = json.JSONEncoder(**_JSON_OPTIONS)
_COVERAGE_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.2em .8em;"
    "text-align:left}.num{text-align:right}code{font-size:13px}.muted{color:#777}"
)


def render_html(report: ReportDocument) -> str:
    """The whole page for `report`, read and checked already (`ReportDocument.from_json`)."""
    view = build_view(report)
    script, style = _asset("report.js"), _asset("report.css")
    # No fetch, image, font or frame from anywhere; only our own inline script and style may run.
    csp = (
        f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    page = template_environment().get_template("report.html.j2")
    return page.render(
        view=view, details=pack_lines(detail_lines(view.details)), script=script, style=style, csp=csp
    )


def coverage_page(section: Mapping[str, object]) -> str:
    """The page `graphrag-eval-corpus coverage --html` writes for the coverage's JSON form
    (`Coverage.to_dict`), under a Content-Security-Policy that allows no request."""
    view = coverage_view({GRAPH_COVERAGE_KEY: dict(section)})
    csp = f"default-src 'none'; style-src '{_sha256(_COVERAGE_STYLE)}'; base-uri 'none'; form-action 'none'"
    page = template_environment().get_template("graph_coverage_page.html.j2")
    return page.render(coverage=view, style=_COVERAGE_STYLE, csp=csp)


def detail_lines(details: Sequence[Mapping[str, object]]) -> bytes:
    """The drill-downs as UTF-8 JSON, one a line (`pack_lines` compresses them); each one's first key
    is `question_text` (`model._drill_downs`)."""
    # orjson writes drill-downs (plain values: texts, finite numbers, flags) as this encoder does, all
    # in one call; each begins a line where one ends and the next begins, unless that text is in one.
    whole = compact_plain(details)
    if whole is not None and whole.count(_BETWEEN_DETAILS) == len(details) - 1:
        return whole[1:-1].replace(_BETWEEN_DETAILS, b'}\n{"question_text":')
    encode = _DETAIL_ENCODER.encode  # one encoder for every question, not one made per call
    # orjson declines a lone surrogate (an agent's broken text), which `_utf8` writes as a JSON escape.
    return b"\n".join(compact_plain(detail) or _utf8(encode(detail)) for detail in details)


def pack_lines(data: bytes) -> str:
    """Every question's drill-down, gzip-compressed in base64 (about a tenth of the plain size), which
    the page inflates when a question is first opened; mtime 0 keeps the bytes reproducible."""
    packed = io.BytesIO()
    text = memoryview(data)
    with GZIP_WRITER(fileobj=packed, mode="wb", compresslevel=6, mtime=0) as stream:
        # zlib-ng's deflate, unlike zlib's, gives other bytes for the same text written in other
        # pieces: the text is given in blocks of one fixed size, so the page's bytes depend on it alone.
        for start in range(0, len(text), _DEFLATE_BLOCK):
            stream.write(text[start : start + _DEFLATE_BLOCK])
    return base64.b64encode(packed.getvalue()).decode("ascii")


def write_html(report: ReportDocument, path: str | os.PathLike[str]) -> Path:
    """Render and replace `path` in one rename, so a reader never sees half a page."""
    target = Path(path)
    write_bytes_atomic(target, page_bytes(report))
    return target


def page_bytes(report: ReportDocument) -> bytes:
    """`render_html` as the file's bytes."""
    return _utf8(render_html(report))


def _utf8(text: str) -> bytes:
    """UTF-8, with a lone surrogate from untrusted text written as its `\\udXXX` escape, which reads
    back as the same text in the page's JSON and shows what was there in its visible text."""
    return text.encode("utf-8", "backslashreplace")


@cache
def template_environment() -> jinja2.Environment:
    """The HTML report's templates, autoescaped; shared with the coverage command's page."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__ or "pytest_graphrag_eval.report.html_report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        optimized=False,  # the optimizer's constant folding took longer than it saved: pages render once
    )
    environment.policies["json.dumps_function"] = _dumps
    environment.policies["json.dumps_kwargs"] = _JSON_OPTIONS
    environment.filters["num"] = fmt
    environment.filters["pct"] = percent
    environment.filters["figure"] = lambda value, style: percent(value) if style == "pct" else fmt(value)
    environment.filters["signed"] = signed
    for name in ("delta_row", "histograms", "changed_questions", "score_bar", "template_rows"):
        environment.globals[name] = getattr(markup, name)  # the markup a page repeats by the thousand
    return environment


def _dumps(value: object, **options: Any) -> str:
    """`tojson`'s writer: orjson when it writes the standard library's text (plain values, as the
    question index is), `json.dumps` with the policy's options otherwise."""
    encoded = compact_plain(value)
    return json.dumps(value, **options) if encoded is None else encoded.decode("utf-8")


@cache
def _asset(name: str) -> str:
    package = resources.files(__package__ or "pytest_graphrag_eval.report.html_report")
    return (package / "assets" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
