"""The two SQL back-ends behind one small interface: SQLite (stdlib) and PostgreSQL (psycopg 3).

The store writes its SQL once with `?` placeholders; the PostgreSQL back-end turns them into
psycopg's `%s`. Every write runs in one transaction that holds the store's write lock for its
whole length — SQLite's `BEGIN IMMEDIATE` (WAL journal, so readers never wait, and a busy
timeout, so a second writer waits instead of failing with "database is locked"), PostgreSQL's
transaction-scoped advisory lock on the thing being written — so concurrent runs, xdist
controllers and shards queue up and nothing is lost.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from pytest_graphrag_eval.errors import install_extra_hint
from pytest_graphrag_eval.history.errors import HistoryError
from pytest_graphrag_eval.history.locations import HistoryLocation
from pytest_graphrag_eval.history.schema import Dialect

BUSY_TIMEOUT_SEC = 120.0  # a writer waits this long for another to finish before giving up
CONNECT_TIMEOUT_SEC = 10
_LOCK_NAMESPACE = 0x67726167  # "grag": advisory locks of this package


class Backend(Protocol):
    dialect: Dialect
    location: HistoryLocation

    def transaction(self, *, write: bool, lock: str | None = None) -> Any: ...
    def insert_id(self, cursor: Any, sql: str, params: Sequence[object]) -> int: ...
    def insert_many(
        self, cursor: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None: ...
    def close(self) -> None: ...


def open_backend(location: HistoryLocation) -> Backend:
    if location.kind == "sqlite":
        return SqliteBackend(location)
    return PostgresBackend(location)


class SqliteBackend:
    dialect: Dialect = "sqlite"

    def __init__(self, location: HistoryLocation) -> None:
        assert location.path is not None
        self.location = location
        path = location.path
        if path.exists() and path.is_dir():
            raise HistoryError(f"history {location.display}: is a folder, not an SQLite file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SEC, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise HistoryError(f"history {location.display}: cannot open it: {error}") from None
        try:
            self.connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SEC * 1000)}")
            self.connection.execute("PRAGMA journal_mode = WAL")
            self.connection.execute("PRAGMA synchronous = NORMAL")
            self.connection.execute("PRAGMA foreign_keys = ON")
            self.connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as error:  # busy past the timeout, read-only, I/O
            self.connection.close()
            raise HistoryError(f"history {location.display}: cannot use it: {error}") from None
        except sqlite3.DatabaseError as error:  # not a database, or a damaged one
            self.connection.close()
            raise HistoryError(
                f"history {location.display}: not a readable SQLite history ({error}); "
                "point --graphrag-history at another file or restore this one"
            ) from None

    @contextmanager
    def transaction(self, *, write: bool, lock: str | None = None) -> Iterator[sqlite3.Cursor]:
        """One transaction; a write one holds SQLite's single write lock from its start."""
        cursor = self.connection.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield cursor
            cursor.execute("COMMIT")
        except BaseException:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise
        finally:
            cursor.close()

    def insert_id(self, cursor: sqlite3.Cursor, sql: str, params: Sequence[object]) -> int:
        cursor.execute(sql, params)
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid)

    def insert_many(
        self, cursor: sqlite3.Cursor, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        marks = ", ".join("?" for _ in columns)
        cursor.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def close(self) -> None:
        self.connection.close()


class PostgresBackend:
    dialect: Dialect = "postgresql"

    def __init__(self, location: HistoryLocation) -> None:
        try:
            import psycopg
        except ImportError:
            raise HistoryError(
                f"history {location.display}: PostgreSQL needs psycopg 3: {install_extra_hint('history-pg')}"
            ) from None
        self.location = location
        self._psycopg = psycopg
        kwargs: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_SEC, "autocommit": True}
        if location.password is not None:
            kwargs["password"] = location.password
        try:
            self.connection = psycopg.connect(location.conninfo or "", **kwargs)
        except psycopg.Error as error:
            raise HistoryError(
                f"history {location.display}: cannot connect: {location.scrub(_first_line(error))}"
            ) from None

    @contextmanager
    def transaction(self, *, write: bool, lock: str | None = None) -> Iterator[Any]:
        """One transaction; `lock` names an advisory lock held until it ends (writers of one thing queue)."""
        try:
            with self.connection.transaction(), self.connection.cursor() as cursor:
                wrapped = _PercentCursor(cursor)
                if lock is not None:
                    wrapped.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_LOCK_NAMESPACE, lock))
                yield wrapped
        except self._psycopg.OperationalError as error:
            raise HistoryError(
                f"history {self.location.display}: {self.location.scrub(_first_line(error))}"
            ) from None

    def insert_id(self, cursor: Any, sql: str, params: Sequence[object]) -> int:
        cursor.execute(sql + " RETURNING run_id", params)
        return int(cursor.fetchone()[0])

    def insert_many(
        self, cursor: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        with cursor.raw.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def close(self) -> None:
        self.connection.close()


class _PercentCursor:
    """A psycopg cursor taking the store's `?` placeholders."""

    def __init__(self, cursor: Any) -> None:
        self.raw = cursor

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s"), params)

    def fetchone(self) -> Any:
        return self.raw.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self.raw.fetchall())


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
