"""ReportWrittenAhead: a JSON report begun by a child process is the file `write_json_atomic` writes.

Each case runs in a fresh interpreter (one thread, so a child is forked; see test_forked_work.py).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from test_forked_work import FRESH_PROCESS_CAN_FORK, run_fresh

pytestmark = pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")

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
