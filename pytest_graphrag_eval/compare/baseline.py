"""Read and check the JSON report of an earlier run before comparing against it; a format_version 1
baseline is refused, as without per-question outcomes a comparison would hide its regressions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.corpus.input_files import decode_input, read_input_bytes
from pytest_graphrag_eval.errors import InputError, SourceLocation, json_problem
from pytest_graphrag_eval.formats.json_text import vouched_loads
from pytest_graphrag_eval.report_model import ReportDocument


def read_report(path: str | Path, *, what: str = "baseline report") -> ReportDocument:
    """The typed report at `path`, else an `InputError` naming the file and `what` it was read as."""
    # Bounded and encoding-checked like every user file: a report is an artifact of another run.
    return report_from_bytes(read_input_bytes(path, what=what), path, what=what)


def report_from_bytes(data: bytes, path: str | Path, *, what: str = "baseline report") -> ReportDocument:
    """`read_report` of a file's bytes already read: a merge checks the hash of the very bytes it reads."""
    vouched = vouched_loads(data)
    file = str(path)
    if vouched is not None:
        return ReportDocument.from_json(vouched[0], file, plain=True)
    text = decode_input(data, SourceLocation(file=file), what=what)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"the {what} is not JSON: {error.msg} (column {error.colno})",
            SourceLocation(file=file, line=error.lineno),
        ) from None
    except (ValueError, RecursionError) as error:  # past Python's bounds: a number's digits, nesting
        raise InputError(f"the {what} is not JSON: {json_problem(error)}", SourceLocation(file)) from None
    return ReportDocument.from_json(parsed, file)


def load_baseline(path: str | Path) -> dict[str, Any]:
    """The report at `path` as its JSON object, checked; an `InputError` naming the file otherwise."""
    return read_report(path).to_json()


def check_report(report: Any, source: str) -> None:
    """Raise `InputError` unless `report` is a format_version>=2 report with well-formed results."""
    ReportDocument.from_json(report, source)
