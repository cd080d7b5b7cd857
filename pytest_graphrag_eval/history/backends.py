"""The two SQL back-ends behind one small interface: SQLite (stdlib) and PostgreSQL (psycopg 3). Every write
holds the store's write lock for its whole transaction (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's advisory
lock), so concurrent runs, xdist controllers and shards queue up and nothing is lost; every wait is bounded,
and a limit the URL, role or server already sets is kept."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from pytest_graphrag_eval.errors import HistoryError, install_extra_hint
from pytest_graphrag_eval.history.locations import HistoryLocation
from pytest_graphrag_eval.history.schema import Dialect

# a writer waits this long for another to finish (SQLite's busy timeout, PostgreSQL's lock_timeout)
WAIT_SEC = 120.0
STATEMENT_SEC = 600  # no statement of the store runs this long; one that does is stopped
IDLE_IN_TRANSACTION_SEC = 60  # the server ends a session stopped inside its transaction after this
CONNECT_TIMEOUT_SEC = 10
_KEEPALIVES = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
}
_LOCK_NAMESPACE = 0x67726167  # "grag": advisory locks of this package


class Backend(Protocol):
    dialect: Dialect
    location: HistoryLocation

    def transaction(self, *, write: bool, lock: str | None = None) -> Any: ...
    def prepare_writes(self) -> None: ...
    def insert_id(self, cursor: Any, sql: str, params: Sequence[object]) -> int: ...
    def insert_many(
        self, cursor: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None: ...
    def close(self) -> None: ...


def open_backend(location: HistoryLocation, *, read_only: bool = False) -> Backend:
    if location.kind == "sqlite":
        return SqliteBackend(location, read_only=read_only)
    return PostgresBackend(location)


class SqliteBackend:
    dialect: Dialect = "sqlite"

    def __init__(self, location: HistoryLocation, *, read_only: bool = False) -> None:
        assert location.path is not None
        self.location = location
        path = location.path
        if path.exists() and path.is_dir():
            raise HistoryError(f"history {location.display}: is a folder, not an SQLite file")
        try:
            if read_only:
                self.connection = _open_read_only(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.connection = sqlite3.connect(path, timeout=WAIT_SEC, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise HistoryError(f"history {location.display}: cannot open it: {error}") from None
        try:
            self.connection.execute(f"PRAGMA busy_timeout = {int(WAIT_SEC * 1000)}")
            self.connection.execute("PRAGMA foreign_keys = ON")
            self.connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as error:  # busy past the timeout, I/O
            self.connection.close()
            raise HistoryError(describe_failure(location, error, "open")) from None
        except sqlite3.DatabaseError as error:  # not a database, or a damaged one
            self.connection.close()
            raise HistoryError(
                f"history {location.display}: not a readable SQLite history ({error}); "
                "point --graphrag-history at another file or restore this one"
            ) from None

    def prepare_writes(self) -> None:
        """The journal and sync modes of a history being written (once it is known to be one)."""
        try:
            self.connection.execute("PRAGMA journal_mode = WAL")
            self.connection.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError as error:
            raise HistoryError(describe_failure(self.location, error, "write")) from None

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


def _open_read_only(path: Path) -> sqlite3.Connection:
    """The file opened read-only; in a read-only folder, where SQLite cannot make the WAL's shared
    memory, as an immutable file (nobody can be writing it there either); `open_history` has checked
    that it exists."""
    uri = f"file:{quote(str(path.resolve()))}"
    connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=WAIT_SEC, isolation_level=None)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        connection.close()
        connection = sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=WAIT_SEC, isolation_level=None)
    return connection


class PostgresBackend:
    dialect: Dialect = "postgresql"

    def __init__(self, location: HistoryLocation) -> None:
        """Reads and writes alike: a read-only history is the role's or the server's to enforce."""
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise HistoryError(
                f"history {location.display}: PostgreSQL needs psycopg 3: {install_extra_hint('history-pg')}"
            ) from None
        self.location = location
        given = conninfo_to_dict(location.conninfo or "")
        defaults = {"connect_timeout": str(CONNECT_TIMEOUT_SEC), **_KEEPALIVES}
        kwargs: dict[str, Any] = {key: value for key, value in defaults.items() if key not in given}
        try:
            self.connection = psycopg.connect(location.conninfo or "", autocommit=True, **kwargs)
            _bound_waits(self.connection)
        except psycopg.Error as error:
            raise HistoryError(describe_failure(location, error, "connect")) from None

    def prepare_writes(self) -> None:
        """Nothing to set: PostgreSQL's sessions write as they are."""

    @contextmanager
    def transaction(self, *, write: bool, lock: str | None = None) -> Iterator[Any]:
        """One transaction; `lock` names an advisory lock held until it ends (writers of one thing queue)."""
        with self.connection.transaction(), self.connection.cursor() as cursor:
            wrapped = _PercentCursor(cursor)
            if lock is not None:
                wrapped.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_LOCK_NAMESPACE, lock))
            yield wrapped

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


def _bound_waits(connection: Any) -> None:
    """This session's limits, where the URL, the role or the server sets none (0 is "no limit")."""
    limits = {
        "lock_timeout": f"{int(WAIT_SEC * 1000)}ms",
        "statement_timeout": f"{STATEMENT_SEC * 1000}ms",
        "idle_in_transaction_session_timeout": f"{IDLE_IN_TRANSACTION_SEC * 1000}ms",
        # the server's end of the client's keepalives
        **{f"tcp_{key}": value for key, value in _KEEPALIVES.items() if key != "keepalives"},
    }
    for name, value in limits.items():
        current = connection.execute("SELECT current_setting(%s)", (name,)).fetchone()[0]
        if str(current).strip() in ("0", "0ms"):
            connection.execute("SELECT set_config(%s, %s, false)", (name, value))


class _PercentCursor:
    """A psycopg cursor taking the store's `?` placeholders."""

    def __init__(self, cursor: Any) -> None:
        self.raw = cursor

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s"), params)

    def __getattr__(self, name: str) -> Any:  # fetchone, fetchall: the cursor's own
        return getattr(self.raw, name)


_FAILURES = {
    "locked": "another run has been writing it for over {wait:.0f} s (a run stopped while recording holds "
    "the history's lock); nothing was written: try again once it has finished, or stop the process "
    "holding the file ({text})",
    "lock_timeout": "waited {wait:.0f} s for another session's write (a runner paused, stopped or cut off "
    "while recording holds its transaction; the server ends it after {idle} s idle, or end it with "
    "pg_terminate_backend); nothing was written: try again ({text})",
    "statement_timeout": "a statement ran past its time limit and was stopped; nothing was written ({text})",
    "ended": "the server ended this session (idle inside its transaction for too long, or shut down); "
    "nothing was written: run again ({text})",
    "full": "the disk holding it is full or failing ({text}); nothing was written: free space, or prune the "
    "history (graphrag-eval-history URL prune --keep N), then run again",
    "read_only": "cannot write it: the file, its folder or the database is read-only ({text}); reading it "
    "needs no write access (graphrag-eval-history URL list)",
    "connect": "cannot connect: {text}",
    "open": "cannot use it: {text}",
}
"""What a driver's error means, by kind (else by what was being done), with the driver's words as `text`."""
_SQLITE_KINDS = {
    "database is locked": "locked",
    "database table is locked": "locked",
    "disk is full": "full",
    "disk i/o error": "full",
    "readonly": "read_only",
    "read-only": "read_only",
}
_SQLSTATE_KINDS = {
    "55P03": "lock_timeout",
    "57014": "statement_timeout",
    "25P03": "ended",
    "57P01": "ended",
    "53100": "full",
    "25006": "read_only",
}


def describe_failure(location: HistoryLocation, error: BaseException, doing: str) -> str:
    """One sentence for a driver's error: the store, the driver's words without secrets, what to do."""
    text = str(error).strip()
    text = location.scrub(text.splitlines()[0] if text else type(error).__name__)
    if isinstance(error, sqlite3.Error):
        lowered = text.lower()
        kind = next((kind for needle, kind in _SQLITE_KINDS.items() if needle in lowered), doing)
    else:
        kind = _SQLSTATE_KINDS.get(str(getattr(error, "sqlstate", None)), doing)
    template = _FAILURES.get(kind, "{text}")
    return f"history {location.display}: " + template.format(
        wait=WAIT_SEC, idle=IDLE_IN_TRANSACTION_SEC, text=text
    )
