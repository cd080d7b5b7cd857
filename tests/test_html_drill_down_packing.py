"""The HTML page's drill-downs packed (`render.pack_lines`): gzip of their lines, in base64, the same
bytes for the same text, by zlib-ng where the `speed` extra is installed and by zlib without it."""

from __future__ import annotations

import base64
import gzip
import io
import json

import pytest

from pytest_graphrag_eval.report.html_report import render
from pytest_graphrag_eval.report.html_report.render import detail_lines, pack_lines


@pytest.mark.parametrize("questions", [0, 1, 3_000])
def test_packed_drill_downs_inflate_to_their_lines(questions: int) -> None:
    details = [{"question_text": f"é {i} </script>", "answer": "x" * (i % 1_500)} for i in range(questions)]
    lines = detail_lines(details)
    packed = pack_lines(lines)
    assert gzip.decompress(base64.b64decode(packed)) == lines
    assert pack_lines(bytes(lines)) == packed  # the same text, the same bytes
    if questions == 3_000:
        assert len(lines) > 2 * render._DEFLATE_BLOCK  # several blocks given to the compressor


def test_without_the_speed_extra_the_drill_downs_are_packed_by_the_standard_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """zlib-ng (`speed`) and zlib deflate to other bytes; both are gzip the page inflates alike."""
    details = [{"question_text": f"q {index}", "answer": "yes " * (index % 9)} for index in range(1_200)]
    lines = detail_lines(details)
    packed = pack_lines(lines)
    monkeypatch.setattr(render, "GZIP_WRITER", gzip.GzipFile)
    by_zlib = pack_lines(lines)
    whole = io.BytesIO()
    with gzip.GzipFile(fileobj=whole, mode="wb", compresslevel=6, mtime=0) as stream:
        stream.write(lines)
    assert base64.b64decode(by_zlib) == whole.getvalue()
    assert gzip.decompress(base64.b64decode(packed)) == gzip.decompress(base64.b64decode(by_zlib)) == lines
    assert packed != by_zlib  # the extra is installed here: the page's packed bytes are zlib-ng's


@pytest.mark.parametrize(
    "details",
    [
        [],
        [{"question_text": "only one"}],
        # the text between two drill-downs inside one (a SPARQL variable named question_text), and a
        # lone surrogate orjson declines: each drill-down still on a line of its own
        [
            {"question_text": "a", "rows": [{"question_text": 1}, {"question_text": 2}]},
            {"question_text": "b"},
        ],
        [{"question_text": "a\ud800"}, {"question_text": "b", "cost": 1e-05}, {"question_text": "c"}],
    ],
)
def test_drill_downs_are_written_one_a_line_as_the_standard_library_writes_them(
    details: list[dict[str, object]],
) -> None:
    lines = detail_lines(details)
    expected = [
        json.dumps(detail, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")
        for detail in details
    ]
    assert lines == b"\n".join(expected)
