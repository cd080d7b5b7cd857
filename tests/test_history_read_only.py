"""Reading a history needs no write access, and nothing changes a file before it is known to be a history.

The read-only cases run the command as an unprivileged account when the tests run as root (root
writes through any permission bits), through `setpriv` as the PostgreSQL fixture does.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from history_support import run_report

from pytest_graphrag_eval.errors import HistoryError
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.store import open_history


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder an unprivileged account can reach (pytest's own is private to this user)."""
    folder = Path(tempfile.mkdtemp(prefix="graphrag-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


UNPRIVILEGED = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@functools.cache
def unprivileged_can_run_python() -> bool:
    """Whether the unprivileged account can start this interpreter: one built with a shared libpython
    under root's private home (pyenv's) cannot, and the read-only cases are then left to another Python."""
    probe = subprocess.run(
        [*UNPRIVILEGED, sys.executable, "-c", ""], capture_output=True, check=False, cwd="/"
    )
    return probe.returncode == 0


def as_reader(*arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_graphrag_eval.commands.history", *arguments]
    if os.geteuid() == 0:
        if not unprivileged_can_run_python():
            pytest.skip(f"the unprivileged account cannot start {sys.executable} (its files are private)")
        command = [*UNPRIVILEGED, *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, cwd="/")


@pytest.mark.parametrize("file_read_only", [False, True], ids=["writable-file", "read-only-file"])
def test_a_history_in_a_read_only_folder_reads(shared_folder: Path, file_read_only: bool) -> None:
    history = shared_folder / "history.db"
    with open_history(str(history)) as store:
        for night in range(3):
            store.record_run(
                run_report(night, failing=["q00002"] if night == 1 else []),
                run_key=f"night-{night}",
                provenance=RunProvenance(commit=f"c{night}", branch="main"),
            )
    assert sorted(path.name for path in shared_folder.iterdir()) == ["history.db"]  # closed cleanly
    out = Path(tempfile.mkdtemp(prefix="graphrag-out-"))
    out.chmod(0o777)
    history.chmod(0o444 if file_read_only else 0o666)
    shared_folder.chmod(0o555)
    listing = as_reader(str(history), "list")
    assert listing.returncode == 0, listing.stderr
    assert [line.split()[-1] for line in listing.stdout.splitlines()[1:]] == ["night-2", "night-1", "night-0"]
    shown = as_reader(str(history), "show", "night-1", "--json")
    assert shown.returncode == 0 and '"failed": 1' in shown.stdout, shown.stderr
    again = as_reader(str(history), "report", "night-1", "--report", str(out / "night-1.json"))
    assert again.returncode == 0 and '"results"' in (out / "night-1.json").read_text(), again.stderr
    shutil.rmtree(out)
    flaky = as_reader(str(history), "flaky", "--json")
    assert flaky.returncode == 0, flaky.stderr
    assert sorted(path.name for path in shared_folder.iterdir()) == ["history.db"]
    assert '"suite": "corpus.yaml"' in shown.stdout
    # writing says what is read-only, and that reading needs no write access
    pruned = as_reader(str(history), "prune", "--keep", "1")
    assert pruned.returncode == 2
    assert "read-only" in pruned.stderr and "Traceback" not in pruned.stderr, pruned.stderr


def test_another_applications_file_is_refused_untouched(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.close()
    before = other.read_bytes()
    for read_only in (False, True):
        with pytest.raises(
            HistoryError, match=r"not a pytest-graphrag-eval history \(it has other tables: notes\)"
        ):
            open_history(str(other), read_only=read_only)
    assert other.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.db"]  # no -wal, no -shm
    with sqlite3.connect(other) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    connection.close()


def test_reading_a_history_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "history.db"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_graphrag_eval.commands.history", str(missing), "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "no such file" in done.stderr
    assert not (tmp_path / "nowhere").exists()
