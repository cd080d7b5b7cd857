"""Every wait on the history is bounded and said: a frozen writer, a closed pipe, a full disk.

A frozen writer is a real second connection holding its transaction open (as a runner paused,
stopped or cut off while recording holds it), on SQLite and on the real PostgreSQL server. The
recorder runs in a subprocess with the store's wait shortened to a second (`backends.WAIT_SEC`, the
one constant every wait is derived from), so a recorder that waits without limit fails the test by
the subprocess's own timeout instead of hanging it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from history_support import run_report

from pytest_graphrag_eval.history import backends
from pytest_graphrag_eval.history.records import run_record
from pytest_graphrag_eval.history.store import open_history

RECORDER = """
import json, sys
from pytest_graphrag_eval.history import backends
from pytest_graphrag_eval.run.run_history import record_finished_run
backends.WAIT_SEC = 1.0
url, report = sys.argv[1], json.load(open(sys.argv[2]))
outcome = record_finished_run(url, report, run_key="after-the-frozen-one", environ={})
print(json.dumps([outcome.recorded, outcome.line]))
"""


def record_in_subprocess(
    script: str, url: str, report: dict[str, Any], folder: Path, *arguments: str
) -> tuple[bool, str]:
    """Run `script` (which records `report` in `url` and prints the outcome) in a fresh interpreter,
    bounded, so a recorder that waits without limit fails the test instead of hanging it."""
    path = folder / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", script, url, str(path), *arguments],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    recorded, line = json.loads(done.stdout)
    return bool(recorded), str(line)


def test_a_frozen_sqlite_writer_makes_the_next_run_give_up_and_say_why(tmp_path: Path) -> None:
    url = str(tmp_path / "history.db")
    open_history(url).close()
    frozen = sqlite3.connect(url, isolation_level=None)
    frozen.execute("BEGIN IMMEDIATE")  # holds the write lock, as a runner stopped mid-recording does
    try:
        recorded, line = record_in_subprocess(RECORDER, url, run_report(1), tmp_path)
    finally:
        frozen.execute("ROLLBACK")
        frozen.close()
    assert not recorded
    assert f"history {url}: another run has been writing it for over 1 s" in line
    assert "nothing was written: try again" in line


def test_a_frozen_postgresql_writer_makes_the_next_run_give_up_and_say_why(
    tmp_path: Path, postgres_url: str
) -> None:
    import psycopg

    report = run_report(1)
    open_history(postgres_url).close()
    with psycopg.connect(postgres_url) as frozen:  # a transaction, left open: the same question set
        frozen.execute(
            "INSERT INTO question_sets (question_set, question_ids) VALUES (%s, %s)",
            (run_record(report).question_set, "[]"),
        )
        recorded, line = record_in_subprocess(RECORDER, postgres_url, report, tmp_path)
        frozen.rollback()
    assert not recorded
    assert "waited 1 s for another session's write" in line and "pg_terminate_backend" in line
    assert "canceling statement due to lock timeout" in line


def test_every_postgresql_session_has_its_waits_bounded(postgres_url: str) -> None:
    with open_history(postgres_url) as store:
        connection = store.backend.connection  # type: ignore[attr-defined]
        shown = {
            name: connection.execute(f"SHOW {name}").fetchone()[0]
            for name in ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
        }
    assert shown == {
        "lock_timeout": "2min",
        "statement_timeout": "10min",
        "idle_in_transaction_session_timeout": "1min",
    }
    # a limit the URL gives is kept
    with open_history(f"{postgres_url}?options=-c%20lock_timeout%3D7s") as store:
        connection = store.backend.connection  # type: ignore[attr-defined]
        assert connection.execute("SHOW lock_timeout").fetchone()[0] == "7s"


def test_a_runner_stopped_inside_its_transaction_is_ended_by_the_server(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stuck session is ended after the idle limit, so the next run records instead of waiting."""
    report = run_report(1)
    open_history(postgres_url).close()
    monkeypatch.setattr(backends, "IDLE_IN_TRANSACTION_SEC", 1)
    stuck = open_history(postgres_url)
    transaction = stuck.backend.transaction(write=True, lock="run:stuck")
    cursor = transaction.__enter__()
    cursor.execute(
        "INSERT INTO question_sets (question_set, question_ids) VALUES (?, ?)",
        (run_record(report).question_set, "[]"),
    )
    time.sleep(3)  # the runner is stopped here, inside its transaction
    monkeypatch.setattr(backends, "IDLE_IN_TRANSACTION_SEC", 60)
    with open_history(postgres_url) as store:
        recorded = store.record_run(report, run_key="next")
        assert recorded.complete and [run.run_key for run in store.runs()] == ["next"]
    with pytest.raises(Exception, match=r"idle-in-transaction timeout|terminating connection|server closed"):
        transaction.__exit__(None, None, None)
    stuck.close()


def test_a_listing_cut_short_by_its_reader_ends_quietly(tmp_path: Path) -> None:
    url = str(tmp_path / "history.db")
    with open_history(url) as store:
        for number in range(150):
            store.record_run(run_report(number, questions=2), run_key=f"run-{number:03d}")
    for _ in range(3):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_graphrag_eval.commands.history",
                url,
                "list",
                "--json",
                "--limit",
                "150",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stderr is not None
        head = process.stdout.read(100)  # as `| head -c 100` reads, then closes
        process.stdout.close()
        errors = process.stderr.read().decode()
        assert process.wait(timeout=60) == 0, errors
        assert head.startswith(b"[") and errors == ""


FULL_DISK = """
import json, resource, signal, sys
from pytest_graphrag_eval.run.run_history import record_finished_run
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails as on a full disk
url, report = sys.argv[1], json.load(open(sys.argv[2]))
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
outcome = record_finished_run(url, report, run_key="too-big", environ={})
print(json.dumps([outcome.recorded, outcome.line]))
"""


def test_a_full_disk_says_what_to_do(tmp_path: Path) -> None:
    url = str(tmp_path / "history.db")
    open_history(url).close()
    size = Path(url).stat().st_size
    recorded, line = record_in_subprocess(
        FULL_DISK, url, run_report(1, questions=400), tmp_path, str(size + 8192)
    )
    assert not recorded
    assert f"history {url}: the disk holding it is full or failing" in line
    assert "free space, or prune the history (graphrag-eval-history URL prune --keep N)" in line
    with open_history(url) as store:  # nothing half-written
        assert store.runs() == []
