"""A history written by schema version 1 opens under the newest version, upgraded and fully readable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from history_support import run_report

from pytest_graphrag_eval.history.schema import LATEST_VERSION, MIGRATIONS
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports

V1_SQL = Path(__file__).parent / "data" / "history" / "schema_v1.sql"
TABLES = ("question_sets", "runs", "run_questions", "run_reports")


def _v1_sqlite(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        connection.executescript(V1_SQL.read_text(encoding="utf-8"))
    connection.close()
    return str(path)


def _v1_postgresql(url: str, tmp_path: Path) -> str:
    """The same store on PostgreSQL: migration 1's statements (frozen once released), the fixture's rows."""
    source = sqlite3.connect(_v1_sqlite(tmp_path / "source.db"))
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        connection.execute("INSERT INTO schema_version (version) VALUES (1)")
        for statement in MIGRATIONS[0].statements("postgresql"):
            connection.execute(statement)
        for table in TABLES:
            rows = source.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join(["%s"] * len(rows[0]))
            for row in rows:
                connection.execute(f"INSERT INTO {table} VALUES ({marks})", row)
        connection.execute("SELECT setval('runs_run_id_seq', (SELECT max(run_id) FROM runs))")
    source.close()
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def v1_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return _v1_sqlite(tmp_path / "v1.db")
    return _v1_postgresql(request.getfixturevalue("postgres_url"), tmp_path)


def _version(url: str) -> int:
    if url.startswith("postgresql://"):
        with psycopg.connect(url) as connection:
            return int(connection.execute("SELECT version FROM schema_version").fetchone()[0])  # type: ignore[index]
    with sqlite3.connect(url) as connection:
        return int(connection.execute("SELECT version FROM schema_version").fetchone()[0])


def test_a_version_1_store_opens_upgraded_with_its_run_intact(v1_store: str) -> None:
    assert _version(v1_store) == 1
    with open_history(v1_store) as store:
        assert _version(v1_store) == LATEST_VERSION
        (run,) = store.runs()
        assert (run.run_key, run.branch, run.started_at, run.questions, run.failed) == (
            "v1-run",
            "main",
            "2026-01-02T03:04:05Z",
            6,
            1,
        )
        assert run.ci_url is None  # a column version 2 added
        assert store.question_outcomes(last_n=5).strips["q00005"] == "F"
        assert [q.question_id for q in store.question_results("v1-run")][:2] == ["q00000", "q00001"]
        assert len(store.load_report("v1-run")["results"]) == 6
        # what version 2 added works on the upgraded store: shards waiting for their run
        store.record_run(run_report(50, shard=(1, 2)), run_key="sharded", merge_shards=merge_shard_reports)
        assert store.record_run(
            run_report(50, shard=(2, 2)), run_key="sharded", merge_shards=merge_shard_reports
        ).complete
        assert [run.run_key for run in store.runs()] == ["sharded", "v1-run"]
    with open_history(v1_store) as again:  # opening an up-to-date store changes nothing
        assert len(again.runs()) == 2
