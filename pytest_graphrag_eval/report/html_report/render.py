"""Render a JSON report as one self-contained HTML file and write it atomically.

Jinja2 renders the page with autoescaping on; the report data travels in
`<script type="application/json">` blocks through Jinja's `tojson`, which
escapes `<`, `>`, `&` and `'`, so an agent answer holding `</script>` stays
data. The page's own script and style are inlined and pinned by hash in a
Content-Security-Policy that allows no network request at all.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import operator
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

try:  # the `speed` extra: zlib-ng deflates the drill-downs in under half of zlib's time, to the same size
    from zlib_ng import gzip_ng

    GZIP_WRITER: type[gzip.GzipFile] = gzip_ng.GzipNGFile  # a GzipFile whose deflate is zlib-ng's
except ImportError:
    GZIP_WRITER = gzip.GzipFile

from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps
from pytest_graphrag_eval.formats.atomic import write_bytes_atomic
from pytest_graphrag_eval.formats.plain_json import compact_plain
from pytest_graphrag_eval.formats.write_behind import write_behind
from pytest_graphrag_eval.report.html_report.charts import fmt, percent, signed
from pytest_graphrag_eval.report.html_report.markup import changed_questions, delta_row, histogram, score_bar
from pytest_graphrag_eval.report.html_report.model import ReportView, build_view, drill_downs_in_chunks

ASSETS = "assets"
# From this many questions a page is built by two processes (`PageBuilding`): at 1,000 its drill-downs
# take about 0.15 s, forking two children some milliseconds.
FORKED_FROM_QUESTIONS = 1_000
_PACKED_CHUNK = 500  # drill-downs built and encoded while the ones before them are compressed
_DEFLATE_BLOCK = 1 << 20  # the pieces the compressor is given (`_deflate_blocks`)
_DETAIL_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def render_html(report: Mapping[str, object]) -> str:
    """The whole page for `report` (format 1 or 2); raises InputError naming a malformed field."""
    view = build_view(report)
    lines = detail_lines(view.details)
    # deflate lets go of the GIL while it compresses: the drill-downs are packed on a second core while
    # the page renders, and the template waits for them only where it writes them, near its end.
    with ThreadPoolExecutor(max_workers=1) as packer:
        return _render(view, _Awaited(packer.submit(pack_lines, lines)))


def _render(view: ReportView, details: object) -> str:
    script, style = _asset("report.js"), _asset("report.css")
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            view=view,
            details=details,
            script=script,
            style=style,
            csp=_content_security_policy(script, style),
        )
    )


class PageBuilding:
    """The page's bytes (`page_bytes`), begun now and finished by `result()`.

    A large page is built by two forked children (`forked_work`) while this process goes on (a
    merge writes its JSON report and Markdown summary): one builds and packs the drill-downs, most
    of the work, the other renders the page around them; `result()` puts the packed drill-downs in
    their place. Where no child can be forked, or for a small report, `result()` renders the page.
    A context manager, as `ForkedWork` is.
    """

    def __init__(self, report: Mapping[str, object], ahead: DrillDownsAhead | None = None) -> None:
        """`ahead`: the drill-downs, begun before the report was finished; taken if they are its own."""
        self._report = report
        results = report.get("results")
        large = isinstance(results, list) and len(results) >= FORKED_FROM_QUESTIONS
        self._drill_downs = (
            ahead.work
            if ahead is not None and ahead.serves(report)
            else ForkedWork(partial(packed_drill_downs, report), fork=large)
        )
        self._around = (
            ForkedWork(partial(page_around_drill_downs, report)) if self._drill_downs.forked else None
        )

    @property
    def forked(self) -> bool:
        """Whether two children are building the page (False: `result()` builds some or all of it)."""
        return self._drill_downs.forked and self._around is not None and self._around.forked

    def result(self) -> bytes:
        if self._around is None:
            return page_bytes(self._report)
        before, after = self._around.result()
        return b"".join((before, self._drill_downs.result().encode("ascii"), after))

    def __enter__(self) -> PageBuilding:
        return self

    def __exit__(self, *exception: object) -> None:
        for work in (self._drill_downs, self._around):
            if work is not None:
                work.__exit__(None, None, None)


class DrillDownsAhead:
    """A large page's packed drill-downs, begun by a forked child from the results before the rest of
    the report exists: a merge computes its aggregates, the statistics of its comparison and its
    gates meanwhile.

    A question's drill-down is a function of its result, the run's steps scope and, with a
    comparison, the question's change (`question_changes`, known before the comparison's
    statistics); a history's past outcomes add to it too. `PageBuilding` takes these for a report of
    the very same results, scope and changes, without a history, and builds its own for any other
    report. A context manager: leaving it stops the child.
    """

    def __init__(
        self,
        results: Sequence[Mapping[str, object]],
        metadata: Mapping[str, object],
        question_changes: Sequence[Mapping[str, object]] | None = None,
    ) -> None:
        self._results = results
        self._steps_scope = metadata.get("steps_scope")
        self._question_changes = None if question_changes is None else list(question_changes)
        begun: dict[str, object] = {"results": list(results), "metadata": {"steps_scope": self._steps_scope}}
        if self._question_changes is not None:
            begun["comparison"] = {"questions": self._question_changes}
        self.work = ForkedWork(partial(packed_drill_downs, begun))

    @classmethod
    def start(
        cls,
        results: Sequence[Mapping[str, object]],
        metadata: Mapping[str, object],
        question_changes: Sequence[Mapping[str, object]] | None = None,
    ) -> DrillDownsAhead | None:
        """Begin them; None for a small report, or where no child can be forked."""
        if len(results) < FORKED_FROM_QUESTIONS or not forking_helps():
            return None
        return cls(results, metadata, question_changes)

    def serves(self, report: Mapping[str, object]) -> bool:
        """These are `report`'s drill-downs: the same result objects, steps scope and question changes
        (equal, or both absent), and no history."""
        results, metadata, comparison = (
            report.get("results"),
            report.get("metadata"),
            report.get("comparison"),
        )
        changes = comparison.get("questions") if isinstance(comparison, Mapping) else None
        return (
            (comparison is None if self._question_changes is None else changes == self._question_changes)
            and report.get("history") is None
            and isinstance(metadata, Mapping)
            and metadata.get("steps_scope") == self._steps_scope
            and isinstance(results, list)
            and len(results) == len(self._results)
            and all(map(operator.is_, results, self._results))
        )

    def __enter__(self) -> DrillDownsAhead:
        return self

    def __exit__(self, *exception: object) -> None:
        self.work.__exit__(None, None, None)


def page_around_drill_downs(report: Mapping[str, object]) -> tuple[bytes, bytes]:
    """`page_bytes` before and after the packed drill-downs (`packed_drill_downs`), which are not
    built: the page is rendered with a random marker in their place and cut there."""
    marker = secrets.token_hex(16)
    page = _render(build_view(report, with_drill_downs=False), Markup(marker))
    before, found, after = page.partition(marker)
    assert found and marker not in after, "the marker is in the page once"
    return _utf8(before), _utf8(after)


def packed_drill_downs(report: Mapping[str, object]) -> str:
    """The page's drill-downs as it holds them (`pack_details`), built from the report alone."""
    return pack_details(drill_downs_in_chunks(report, _PACKED_CHUNK))


def pack_details(chunks: Iterable[Sequence[object]]) -> str:
    """Every question's drill-down, one JSON document per line, gzip-compressed, in base64.

    About a tenth of the plain size. The page inflates it with the browser's own
    DecompressionStream when a question is first opened, splits the lines and parses only the
    question shown. JSON text holds no raw newline, base64 cannot close a script element, and
    mtime 0 keeps the output reproducible.

    The drill-downs come in chunks, compressed on a second thread (`write_behind`) while the next
    is built and encoded: the same bytes as `pack_lines` of them all (`_deflate_blocks`).
    """
    packed = io.BytesIO()
    with _gzip_stream(packed) as stream:
        lines = (detail_lines(chunk) for chunk in chunks)
        texts = (b"\n" + text if index else text for index, text in enumerate(lines))
        write_behind(_deflate_blocks(texts), stream.write)
    return base64.b64encode(packed.getvalue()).decode("ascii")


def detail_lines(details: Sequence[object]) -> bytes:
    """The drill-downs as UTF-8 JSON, one a line (`pack_details` before compression)."""
    encode = _DETAIL_ENCODER.encode  # one encoder for every question, not one made per call
    # orjson writes a drill-down (plain values: texts, finite numbers, flags) as this encoder does;
    # it declines a lone surrogate (an agent's broken text), which `_utf8` writes as a JSON escape.
    return b"\n".join(compact_plain(detail) or _utf8(encode(detail)) for detail in details)


def pack_lines(data: bytes) -> str:
    """`detail_lines`' text gzip-compressed (level 6, mtime 0) in base64."""
    packed = io.BytesIO()
    with _gzip_stream(packed) as stream:
        for block in _deflate_blocks([data]):
            stream.write(block)
    return base64.b64encode(packed.getvalue()).decode("ascii")


def _gzip_stream(packed: io.BytesIO) -> gzip.GzipFile:
    return GZIP_WRITER(fileobj=packed, mode="wb", compresslevel=6, mtime=0)


def _deflate_blocks(parts: Iterable[bytes]) -> Iterator[bytearray]:
    """`parts` joined and cut again into blocks of `_DEFLATE_BLOCK` bytes (the last may be shorter).

    zlib-ng's deflate, unlike zlib's, gives other bytes for the same text written in other pieces:
    cut the same way whatever pieces it was built in, a text packs to the same bytes.
    """
    pending = bytearray()
    for part in parts:
        pending += part
        while len(pending) >= _DEFLATE_BLOCK:
            yield pending[:_DEFLATE_BLOCK]  # a copy of its own; dropping it from the front moves nothing
            del pending[:_DEFLATE_BLOCK]
    if pending:
        yield pending


class _Awaited:
    """A template value still being computed: Jinja asks for its markup where the page writes it."""

    def __init__(self, future: Future[str]) -> None:
        self._future = future

    def __html__(self) -> Markup:
        return escape(self._future.result())


def write_html(report: Mapping[str, object], path: str | os.PathLike[str]) -> Path:
    """Render and replace `path` in one rename, so a reader never sees half a page."""
    target = Path(path)
    write_bytes_atomic(target, page_bytes(report))
    return target


def page_bytes(report: Mapping[str, object]) -> bytes:
    """`render_html` as the file's bytes."""
    return _utf8(render_html(report))


def _utf8(text: str) -> bytes:
    """UTF-8, with a lone surrogate (untrusted text from a broken decoder, which UTF-8 cannot hold)
    written as its `\\udXXX` escape: inside the page's JSON blocks that is the same text again, and
    in its visible text it shows what was there instead of the page failing to be written."""
    return text.encode("utf-8", "backslashreplace")


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__ or "pytest_graphrag_eval.report.html_report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.policies["json.dumps_function"] = _dumps
    environment.policies["json.dumps_kwargs"] = {
        "ensure_ascii": False,
        "separators": (",", ":"),
        "allow_nan": False,
        "default": str,
    }
    environment.filters["num"] = fmt
    environment.filters["pct"] = percent
    environment.filters["figure"] = lambda value, style: percent(value) if style == "pct" else fmt(value)
    environment.filters["signed"] = signed
    environment.globals["delta_row"] = delta_row
    environment.globals["histogram"] = histogram
    environment.globals["changed_questions"] = changed_questions
    environment.globals["score_bar"] = score_bar
    return environment


def _dumps(value: object, **options: Any) -> str:
    """`tojson`'s writer: orjson when it writes the standard library's text (plain values, as the
    question index is), `json.dumps` with the policy's options otherwise."""
    encoded = compact_plain(value)
    return json.dumps(value, **options) if encoded is None else encoded.decode("utf-8")


@cache
def _asset(name: str) -> str:
    return (
        resources.files(__package__ or "pytest_graphrag_eval.report.html_report") / ASSETS / name
    ).read_text(encoding="utf-8")


def _content_security_policy(script: str, style: str) -> str:
    """No fetch, image, font or frame from anywhere; only our own inline script and style may run."""
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src '{_sha256(script)}'",
            f"style-src '{_sha256(style)}'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")
