"""The history's schema: numbered forward migrations, one SQL script per dialect. Plain SQL rather than
SQLAlchemy + Alembic: five tables whose dialects differ in a few types, so the SQLite default needs only the
standard library. Each migration runs in the transaction that bumps `schema_version`, so two processes upgrade
an old store once. A released migration is never edited."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Dialect = Literal["sqlite", "postgresql"]


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: Callable[[Dialect], tuple[str, ...]]  # the SQL of one dialect


def _runs_table(key: str, real: str) -> str:
    return f"""
CREATE TABLE runs (
    run_id {key},
    run_key TEXT NOT NULL UNIQUE,
    recorded_at TEXT NOT NULL,
    started_at TEXT NOT NULL,
    duration_sec {real},
    commit_sha TEXT,
    branch TEXT,
    ci TEXT,
    tool_version TEXT,
    corpus_identity TEXT NOT NULL,
    graph_identity TEXT,
    responses_identity TEXT NOT NULL,
    settings_fingerprint TEXT NOT NULL,
    identity TEXT NOT NULL,
    questions INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    interrupted INTEGER NOT NULL,
    failure_reason TEXT,
    aggregates TEXT NOT NULL,
    gates TEXT NOT NULL,
    question_set TEXT NOT NULL,
    outcome_codes TEXT NOT NULL
)"""


def _v1(dialect: Dialect) -> tuple[str, ...]:
    key = "INTEGER PRIMARY KEY AUTOINCREMENT" if dialect == "sqlite" else "BIGSERIAL PRIMARY KEY"
    blob = "BLOB" if dialect == "sqlite" else "BYTEA"
    real = "REAL" if dialect == "sqlite" else "DOUBLE PRECISION"
    run_ref = "INTEGER" if dialect == "sqlite" else "BIGINT"
    return (
        _runs_table(key, real),
        "CREATE INDEX runs_by_time ON runs (started_at, run_id)",
        "CREATE INDEX runs_by_branch ON runs (branch, started_at)",
        """
CREATE TABLE question_sets (
    question_set TEXT PRIMARY KEY,
    question_ids TEXT NOT NULL
)""",
        f"""
CREATE TABLE run_questions (
    run_id {run_ref} NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    template_id TEXT,
    outcome TEXT NOT NULL,
    passed INTEGER,
    attempts TEXT,
    failure TEXT,
    scores TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
)""",
        f"""
CREATE TABLE run_reports (
    run_id {run_ref} PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    encoding TEXT NOT NULL,
    body {blob} NOT NULL
)""",
    )


def _v2(dialect: Dialect) -> tuple[str, ...]:
    blob = "BLOB" if dialect == "sqlite" else "BYTEA"
    return (
        "ALTER TABLE runs ADD COLUMN ci_url TEXT",
        f"""
CREATE TABLE pending_shards (
    run_key TEXT NOT NULL,
    shard_index INTEGER NOT NULL,
    shard_count INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    provenance TEXT NOT NULL,
    report {blob} NOT NULL,
    PRIMARY KEY (run_key, shard_index)
)""",
    )


def _v3(dialect: Dialect) -> tuple[str, ...]:
    """A run's suite (NULL before: matches any), and a waiting shard's CI run across re-run attempts."""
    return (
        "ALTER TABLE runs ADD COLUMN suite TEXT",
        "CREATE INDEX runs_by_suite ON runs (suite, started_at)",
        "ALTER TABLE pending_shards ADD COLUMN run_family TEXT",
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, their questions and reports", _v1),
    Migration(2, "CI links; shards waiting for the rest of their run", _v2),
    Migration(3, "suites; a shard's CI run across re-run attempts", _v3),
)
LATEST_VERSION = MIGRATIONS[-1].version

VERSION_TABLE = "CREATE TABLE schema_version (version INTEGER NOT NULL)"
