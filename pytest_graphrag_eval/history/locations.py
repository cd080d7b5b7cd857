"""Where a history lives: a URL or path turned into an SQLite file or a PostgreSQL conninfo.

- a path, or `sqlite:///relative/path`, `sqlite:////absolute/path` -> an SQLite file;
- `postgresql://user@host:port/db` (or `postgres://`) -> PostgreSQL through psycopg 3.

The PostgreSQL password comes from the environment (`PGPASSWORD`, or libpq's password file)
or from the URL; either way it is kept out of `display`, which every message and report uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from pytest_graphrag_eval.history.errors import HistoryError

_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


@dataclass(frozen=True)
class HistoryLocation:
    """A parsed history URL. `conninfo` holds the password (if any); `display` never does."""

    kind: Literal["sqlite", "postgresql"]
    display: str
    path: Path | None = None
    conninfo: str | None = None
    password: str | None = field(default=None, repr=False)

    def scrub(self, text: str) -> str:
        """`text` with the password blanked out, for messages that quote a driver's own words."""
        if self.password:
            text = text.replace(self.password, "***").replace(quote(self.password, safe=""), "***")
        return text


def parse_location(url: str, environ: Mapping[str, str] | None = None) -> HistoryLocation:
    """The location `url` names; `environ` supplies `PGPASSWORD` when the URL has no password."""
    text = url.strip()
    if not text:
        raise HistoryError("the history URL is empty: give a file path, sqlite:///PATH or postgresql://...")
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in _POSTGRES_SCHEMES:
        return _postgres(text, environ)
    if scheme == "sqlite":
        path = text[len("sqlite:///") :] if text.lower().startswith("sqlite:///") else ""
        if not path:
            raise HistoryError(f"{text}: an SQLite history URL is sqlite:///relative.db or sqlite:////abs.db")
        return HistoryLocation("sqlite", str(Path(path)), path=Path(path))
    if scheme:
        raise HistoryError(
            f"{_scrub_url(text)}: unknown history scheme {scheme!r}: give a file path, sqlite:///PATH "
            "or postgresql://USER@HOST/DB"
        )
    return HistoryLocation("sqlite", text, path=Path(text))


def _postgres(text: str, environ: Mapping[str, str] | None) -> HistoryLocation:
    parts = urlsplit(text)
    password = unquote(parts.password) if parts.password else None
    display = _scrub_url(text)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = unquote(parts.username) if parts.username else None
    if user:
        netloc = f"{quote(user, safe='')}@{netloc}"
    if password is None and environ is not None and environ.get("PGPASSWORD"):
        password = environ["PGPASSWORD"]
    conninfo = urlunsplit(("postgresql", netloc, parts.path, parts.query, ""))
    return HistoryLocation("postgresql", display, conninfo=conninfo, password=password)


def _scrub_url(text: str) -> str:
    """The URL with any password replaced by `***`."""
    try:
        parts = urlsplit(text)
        if parts.password is None:
            return text
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, f"{parts.username}:***@{host}", parts.path, parts.query, ""))
    except ValueError:
        return "<history URL>"
