"""The baseline file a merge of shards compares with (the shards' or `--baseline`'s), read again and
refused unless its bytes match the SHA-256 the shards recorded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.compare.baseline import report_from_bytes
from pytest_graphrag_eval.corpus.input_files import read_input_bytes
from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.report_model import ReportDocument
from pytest_graphrag_eval.run.run_identity import bytes_sha256


@dataclass(frozen=True)
class BaselineRead:
    """Which baseline file a merge reads: its path, the SHA-256 the shards recorded (None: they had
    no baseline, `--baseline` gives one), and whether a missing file is for the hash check to tell."""

    path: str
    sha256: str | None
    checked: bool


def read_baseline_file(read: BaselineRead) -> ReportDocument | None:
    """Read, check by its hash and parse the baseline; None when the file is missing or is not the one
    whose SHA-256 the shards recorded (whatever it holds), `InputError` when it is not a report."""
    data = _baseline_bytes(read.path, checked=read.checked)
    if data is None or (read.checked and bytes_sha256(data) != read.sha256):
        return None
    return report_from_bytes(data, read.path)  # the very bytes hashed


def baseline_read(record: Mapping[str, Any] | None, baseline_path: str | None) -> BaselineRead | None:
    """The file to read: `--baseline`, else the one the shards recorded (`record`); None: neither."""
    read_from = baseline_path or (record or {}).get("path")
    if read_from is None:
        return None
    sha256 = record.get("sha256") if record is not None else None
    return BaselineRead(str(read_from), sha256, checked=record is not None)


def _baseline_bytes(path: str, *, checked: bool) -> bytes | None:
    """The baseline file's bytes; None when it is missing and its hash is `checked` (that error says more)."""
    try:
        return read_input_bytes(path, what="baseline report")
    except InputError:
        if not checked or Path(path).is_file():
            raise  # unreadable or too large: its own message
        return None
