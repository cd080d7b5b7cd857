"""The baseline file a merge of shards compares with: which file, read and checked by its hash, and
read by a second process while the merge reads the shards (`BaselineAhead`).

The shards record the baseline's path, SHA-256 and name (`settings.baseline`); the merge reads that
file again, or the one `--baseline` names, and refuses one whose bytes are not the recorded ones.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.compare.baseline import comparison_view, report_from_bytes
from pytest_graphrag_eval.compare.numeric import require_statistics
from pytest_graphrag_eval.corpus.input_files import read_input_bytes
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError, InputError
from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps
from pytest_graphrag_eval.report.run_identity import bytes_sha256
from pytest_graphrag_eval.report_model import ReportDocument


@dataclass(frozen=True)
class BaselineRead:
    """Which baseline file a merge reads: its path, the SHA-256 the shards recorded (None: they had
    no baseline, `--baseline` gives one), and whether a missing file is for the hash check to tell."""

    path: str
    sha256: str | None
    checked: bool


@dataclass(frozen=True)
class BaselineFile:
    """A baseline as a merge compares with it (`compare.baseline.comparison_view`); None when the
    file is missing or is not the one whose SHA-256 the shards recorded."""

    read: BaselineRead
    document: ReportDocument | None


def read_baseline_file(read: BaselineRead) -> BaselineFile:
    """Read, check by its hash and parse the baseline; `InputError` when it is not a report (but a
    file that is not the one the shards recorded is that, whatever it holds).

    hashlib lets go of the GIL: the bytes are hashed on a second thread while they are parsed.
    """
    data = _baseline_bytes(read.path, checked=read.checked)
    if data is None:
        return BaselineFile(read, None)
    with ThreadPoolExecutor(max_workers=1) as hasher:
        digest = hasher.submit(bytes_sha256, data) if read.checked else None
        try:
            document = comparison_view(report_from_bytes(data, read.path))  # the very bytes hashed
        except InputError:
            if digest is not None and digest.result() != read.sha256:
                return BaselineFile(read, None)
            raise
        if digest is not None and digest.result() != read.sha256:
            return BaselineFile(read, None)
    return BaselineFile(read, document)


class BaselineAhead:
    """The baseline file read by a second process (`forked_work`) while this one reads the shards.

    The file is the one the first shard recorded (or `--baseline`); `read` gives that process's
    result when the merge asks for that very file, and reads here otherwise (and wherever a child
    cannot be forked), so what the merge gets never depends on it. A context manager: leaving it
    stops a child whose result was not asked for (the merge failed first).
    """

    def __init__(self, first_shard: str | None, baseline_path: str | None) -> None:
        self._work = (
            ForkedWork(partial(_recorded_baseline_file, first_shard, baseline_path))
            if first_shard is not None and forking_helps()
            else None
        )

    def read(self, wanted: BaselineRead) -> BaselineFile:
        work, self._work = self._work, None
        if work is not None:
            # The comparison will need numpy and scipy: imported while the child still reads, not after.
            with contextlib.suppress(ConfigurationError):  # the comparison says it, as without a child
                require_statistics()
            found = work.result()
            if found is not None and found.read == wanted:
                return found
        return read_baseline_file(wanted)

    def __enter__(self) -> BaselineAhead:
        return self

    def __exit__(self, *exception: object) -> None:
        if self._work is not None:
            self._work.__exit__(None, None, None)
            self._work = None


def _recorded_baseline_file(shard_path: str, baseline_path: str | None) -> BaselineFile | None:
    """`read_baseline_file` of the baseline a merge of shards led by `shard_path` will read, told from
    that shard's metadata alone (msgspec skips its results unread); None when there is none, or
    anything is amiss (the merge then reads and checks everything in order, and says what)."""
    try:
        import msgspec

        head = msgspec.json.decode(
            read_input_bytes(shard_path, what="shard report"), type=dict[str, msgspec.Raw]
        )
        record = msgspec.json.decode(head["metadata"])["settings"].get("baseline")
        if record is not None and (
            not isinstance(record, dict) or (record.get("history") and not baseline_path)
        ):
            return None
        wanted = baseline_read(record, baseline_path)
        return read_baseline_file(wanted) if wanted is not None else None
    except (ImportError, GraphragEvalError, ValueError, LookupError, TypeError, AttributeError):
        return None  # (msgspec's errors are ValueErrors)


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
