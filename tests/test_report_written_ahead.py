"""ReportWrittenAhead: a JSON report begun by a child process is the file `write_json_atomic` writes.

Each case with a child runs in a fresh interpreter (one thread, so a child is forked; see
test_forked_work.py). The head's writing, a chunk of results at a time, is checked here.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from test_forked_work import FRESH_PROCESS_CAN_FORK, run_fresh

from pytest_graphrag_eval.report.json_report import _HEAD_CHUNK, _write_head, write_json_atomic

forks = pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")

SETUP = """
import os
from pathlib import Path
from pytest_graphrag_eval.report import json_report
from pytest_graphrag_eval.report.json_report import ReportWrittenAhead, write_json_atomic

folder = Path({folder!r})
records = [
    {{"template_id": "t", "question_id": f"q{{i}}", "outcome": "passed", "cost": 1e-05 * i,
      "text": "é\\u2028"}}
    for i in range(50)
]
report = {{"format_version": 2, "results": records, "aggregates": {{"x": float("nan")}}, "gates": [],
          "metadata": {{"big": 2**70}}, "comparison": {{"delta": 0.5}}}}
expected = folder / "expected.json"
write_json_atomic(expected, report, plain_keys=["results", "comparison"])
head = {{"format_version": 2, "results": list(records)}}
"""


def fresh(folder: Path, case: str) -> list[str]:
    return run_fresh(SETUP.format(folder=str(folder)) + textwrap.dedent(case))


@forks
def test_the_report_finished_after_its_results_is_the_one_written_whole(tmp_path: Path) -> None:
    lines = fresh(
        tmp_path,
        """
        target = folder / "ahead.json"
        with ReportWrittenAhead.start(target, head, head.keys()) as ahead:
            ahead.finish(report, ["results", "comparison"])
        print(target.read_bytes() == expected.read_bytes(), sorted(p.name for p in folder.glob(".*")))
        """,
    )
    assert lines == ["True", "[]"]


@forks
def test_a_report_whose_results_are_not_those_begun_is_written_whole(tmp_path: Path) -> None:
    lines = fresh(
        tmp_path,
        """
        target = folder / "ahead.json"
        other = {**report, "results": [dict(record) for record in records]}  # equal, not the same objects
        other["results"][0]["cost"] = 7.0
        with ReportWrittenAhead.start(target, head, head.keys()) as ahead:
            ahead.finish(other, ["results", "comparison"])
        write_json_atomic(folder / "other.json", other, plain_keys=["results", "comparison"])
        same = target.read_bytes() == (folder / "other.json").read_bytes()
        print(same, sorted(p.name for p in folder.glob(".*")))
        """,
    )
    assert lines == ["True", "[]"]


@forks
def test_a_child_that_fails_leaves_the_results_to_this_process(tmp_path: Path) -> None:
    lines = fresh(
        tmp_path,
        """
        parent = os.getpid()
        write_head = json_report._write_head

        def failing_in_the_child(temporary, *rest):
            if os.getpid() != parent:
                temporary.write_bytes(b"half a result")
                os._exit(1)
            return write_head(temporary, *rest)

        json_report._write_head = failing_in_the_child
        target = folder / "ahead.json"
        with ReportWrittenAhead.start(target, head, head.keys()) as ahead:
            ahead.finish(report, ["results", "comparison"])
        print(target.read_bytes() == expected.read_bytes())
        """,
    )
    assert lines == ["True"]


@forks
def test_leaving_without_finishing_writes_nothing_and_leaves_no_file(tmp_path: Path) -> None:
    lines = fresh(
        tmp_path,
        """
        target = folder / "ahead.json"
        try:
            with ReportWrittenAhead.start(target, head, head.keys()):
                raise RuntimeError("the comparison failed")
        except RuntimeError:
            pass
        print(target.exists(), sorted(p.name for p in folder.glob(".*")))
        """,
    )
    assert lines == ["False", "[]"]


@pytest.mark.parametrize("count", [0, 1, _HEAD_CHUNK - 1, _HEAD_CHUNK, _HEAD_CHUNK + 1, 2 * _HEAD_CHUNK + 7])
def test_results_written_a_chunk_at_a_time_are_the_report_written_whole(tmp_path: Path, count: int) -> None:
    records: list[dict[str, object]] = [
        {"question_id": f"q{index}", "cost": 1e-05 * index, "small": 1.5e-07, "text": 'é\u2028 "e-5"\n'}
        for index in range(count)
    ]
    if count > _HEAD_CHUNK:
        records[_HEAD_CHUNK]["big"] = 2**70  # orjson declines this chunk: the standard library writes it
    head = {"format_version": 2, "results": records}
    expected = tmp_path / "whole.json"
    write_json_atomic(expected, head, plain_keys=list(head))
    written = tmp_path / "head.json"
    assert _write_head(written, list(head.items()), list(head))
    assert written.read_bytes() + b"\n}\n" == expected.read_bytes()
