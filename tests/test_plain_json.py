"""Plain JSON values read and written by orjson: the standard library's values and bytes, or declined."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.compare.baseline import read_report
from pytest_graphrag_eval.formats import json_text, plain_json
from pytest_graphrag_eval.report.json_report import json_bytes, write_json_atomic

orjson = pytest.importorskip("orjson")

# Floats of every form: Python writes 1e-05 and 1.5e-07 where orjson writes 0.00001 and 1.5e-7.
FLOATS = [
    1e-05,
    9.99e-05,
    0.0001,
    1.5e-07,
    -1e-07,
    5e-324,
    1e-300,
    1e16,
    1.5e16,
    1e22,
    -0.0,
    0.1,
    100.0,
    1 / 3,
]
plain_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(FLOATS)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), children, max_size=4
        )
    ),
    max_leaves=30,
)


def stdlib_indented(value: object) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(plain_values)
def test_plain_values_are_written_as_the_standard_library_writes_them(value: object) -> None:
    assert plain_json.indented_plain(value) == stdlib_indented(value)


def test_floats_orjson_writes_otherwise_are_written_by_python() -> None:
    value = {
        "costs": FLOATS,
        "text": 'a cost of 1e-05,\n or "0.00001"',
        "nested": [[1.5e-07], {"x": 2e-05}],
        # numbers ending as those do, written alike by both: a negative integer, a larger decimal
        "alike": [-5, -1e-07, 10.00001, -0.00001, {"delta": -3}],
    }
    assert plain_json.indented_plain(value) == stdlib_indented(value)


@pytest.mark.parametrize(
    "value",
    [
        ["\ud800"],  # a lone surrogate: the standard library escapes it
        [2**64],  # beyond 64 bits
        {1: "a key that is not text"},
        [datetime.date(2024, 1, 2)],
        [dataclasses.make_dataclass("Point", ["x"])(1)],
    ],
)
def test_values_that_are_not_plain_are_declined(value: object) -> None:
    """(NaN is not declined: orjson writes null. No vouched-for text holds one, see
    `json_text.vouched_loads`.)"""
    assert plain_json.indented_plain(value) is None


@settings(max_examples=200, deadline=None)
@given(plain_values)
def test_text_of_plain_values_is_read_as_the_standard_library_reads_it(value: object) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    vouched = json_text.vouched_loads(data)
    assert vouched is not None and repr(vouched[0]) == repr(json.loads(data))


@pytest.mark.parametrize(
    "text",
    [
        b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark
        b"[NaN]",
        b"[1e400]",  # the standard library reads infinity
        b'["\\ud800"]',
        b'["\xff"]',  # not UTF-8
        b"[1,]",
    ],
)
def test_text_it_cannot_vouch_for_is_declined(text: bytes) -> None:
    assert json_text.vouched_loads(text) is None


@pytest.mark.parametrize(
    "text",
    [
        b"[123456789012345678901234567890, -12345678901234567890123, 18446744073709551616]",
        b'{"n":\n  12345678901234567890123, "content_hash": "sha256:7437530080183626419c3ff4e"}',
        b"[0.1000000000000000055511151231257827, 2.2250738585072011e-308, 4.9406564584124654e-324, -0, -0.0]",
        b'{"k": 1, "k": 2, "\\u00e9\\ud83d\\ude00": "\\u2028"}',
        b"[1e-400, 1.7976931348623157e308, 1E5]",
    ],
)
def test_numbers_of_any_size_and_odd_forms_are_read_as_the_standard_library_reads_them(text: bytes) -> None:
    vouched = json_text.vouched_loads(text)
    assert vouched is not None and repr(vouched[0]) == repr(json.loads(text))


def test_a_report_read_by_orjson_is_written_again_byte_for_byte(tmp_path: Path) -> None:
    results = [
        {
            "template_id": "t",
            "question_id": f"q{index}",
            "outcome": "passed",
            "cost": cost,
            "text": "é\u2028\x00",
        }
        for index, cost in enumerate(FLOATS)
    ]
    report = {
        "format_version": 2,
        "results": results,
        "aggregates": {},
        "gates": [],
        "metadata": {"x": 1e-05},
    }
    source = tmp_path / "report.json"
    source.write_bytes(json_bytes(report, indent=2) + b"\n")
    document = read_report(source)
    assert document.plain_results
    plain, stdlib = tmp_path / "plain.json", tmp_path / "stdlib.json"
    write_json_atomic(plain, document.to_json(), plain_keys=("results",))
    write_json_atomic(stdlib, document.to_json())
    assert plain.read_bytes() == stdlib.read_bytes() == source.read_bytes()


def test_without_the_speed_extra_reports_are_read_and_written_by_the_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_text, "_REPORT_DECODER", None)
    monkeypatch.setattr(plain_json, "orjson", None)
    plain_json._orjson_writes_like_json.cache_clear()
    try:
        result = {"template_id": "t", "question_id": "q", "outcome": "passed", "cost": 1e-05}
        report = {"format_version": 2, "results": [result], "aggregates": {}, "gates": [], "metadata": {}}
        source = tmp_path / "report.json"
        source.write_bytes(json_bytes(report, indent=2) + b"\n")
        document = read_report(source)
        assert not document.plain_results
        assert plain_json.indented_plain(report) is None
        written = tmp_path / "written.json"
        write_json_atomic(written, document.to_json(), plain_keys=("results",))
        assert written.read_bytes() == source.read_bytes()
    finally:
        plain_json._orjson_writes_like_json.cache_clear()


@settings(max_examples=300, deadline=None)
@given(plain_values)
def test_compact_plain_values_are_the_standard_librarys_or_declined(value: object) -> None:
    """The HTML report's drill-downs: orjson's compact text, unless a float it writes otherwise is in it."""
    compact = plain_json.compact_plain(value)
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if compact is None:  # declined only for that pattern (anywhere, in a text too)
        assert re.search(rb"\de-|0\.0000", orjson.dumps(value))
    else:
        assert compact == expected


def test_compact_plain_declines_floats_orjson_writes_otherwise() -> None:
    assert plain_json.compact_plain({"cost": 1e-05}) is None
    assert plain_json.compact_plain({"cost": 1.5e-07}) is None
    assert plain_json.compact_plain({"cost": 0.5, "text": "re-run"}) == b'{"cost":0.5,"text":"re-run"}'
