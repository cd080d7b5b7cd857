"""Where a history lives: a path or `sqlite:///` URL (an SQLite file), or a PostgreSQL URL or
`key=value` connection string. PostgreSQL text is parsed by libpq itself, so the tool reads exactly
what the driver connects with; `display`, which every message uses, never holds a password.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pytest_graphrag_eval.errors import HistoryError, install_extra_hint
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.report.shown_path import printed_path

_POSTGRES_SCHEMES = {"postgresql": "postgresql", "postgres": "postgresql", "postgresql+psycopg": "postgresql"}
_SQLITE_PREFIX = "sqlite:///"
# libpq's keywords a key=value connection string may begin with (the common ones; libpq checks all)
_CONNINFO_START = re.compile(
    r"^\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|options|application_name"
    r"|connect_timeout|target_session_attrs)\s*=",
)
_SECRET_KEYS = ("password", "sslpassword")
_DISPLAYED = ("user", "host", "hostaddr", "port", "dbname", "service")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
USAGE = "give a file path, sqlite:///PATH or postgresql://USER@HOST/DB"


@dataclass(frozen=True)
class HistoryLocation:
    """A parsed history URL. `conninfo` holds the password (if any); `display` never does."""

    kind: Literal["sqlite", "postgresql"]
    display: str
    path: Path | None = None
    conninfo: str | None = field(default=None, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def scrub(self, text: str) -> str:
        """`text` with every secret blanked out, for messages that quote a driver's own words."""
        for secret in self.secrets:
            for form in dict.fromkeys((secret, quote(secret, safe=""), quote(secret))):
                text = text.replace(form, "***")
        return text


def resolve_history_url(text: str, base: Path) -> str:
    """The history setting of a layer whose folder is `base` (the ini file's, or the invocation folder)
    made independent of the current folder: a relative SQLite path made absolute against `base`."""
    stripped = text.strip()
    if not stripped or _is_postgres(stripped):
        return stripped
    prefixed = stripped.lower().startswith(_SQLITE_PREFIX)
    given = stripped[len(_SQLITE_PREFIX) :] if prefixed else stripped
    if not given or (not prefixed and _SCHEME.match(stripped) is not None):
        return stripped  # another scheme, `sqlite://HOST/...` or no path: parse_location says why
    path = Path(given).expanduser()
    absolute = path if path.is_absolute() else base / path
    return f"{_SQLITE_PREFIX}{absolute}" if prefixed else str(absolute)


def parse_location(url: str, environ: Mapping[str, str] | None = None) -> HistoryLocation:
    """The location `url` names; `environ` supplies `PGPASSWORD` when the text has no password."""
    text = url.strip()
    if not text:
        raise HistoryError(f"the history URL is empty: {USAGE}")
    if _is_postgres(text):
        return _postgres(text, environ)
    scheme = _SCHEME.match(text)
    if scheme is not None and scheme[1].lower() == "sqlite":
        path = text[len(_SQLITE_PREFIX) :] if text.lower().startswith(_SQLITE_PREFIX) else ""
        if not path:
            raise HistoryError(
                f"{terminal_safe(text)}: an SQLite history URL is sqlite:///relative.db or sqlite:////abs.db"
            )
        return _sqlite(path)
    if scheme is not None:
        raise HistoryError(
            f"unknown history scheme {terminal_safe(scheme[1])!r} ({scheme[1]}://...): {USAGE}, "
            "or a PostgreSQL key=value connection string"
        )
    return _sqlite(text)


def _sqlite(text: str) -> HistoryLocation:
    """Shown from the current folder when inside it (the path to type next), else absolute."""
    path = Path(text).expanduser()
    return HistoryLocation("sqlite", terminal_safe(printed_path(path, Path.cwd())), path=path)


def _is_postgres(text: str) -> bool:
    scheme = _SCHEME.match(text)
    if scheme is not None:
        return scheme[1].lower() in _POSTGRES_SCHEMES
    return _CONNINFO_START.match(text) is not None


def _postgres(text: str, environ: Mapping[str, str] | None) -> HistoryLocation:
    scheme = _SCHEME.match(text)
    if scheme is not None:
        text = f"{_POSTGRES_SCHEMES[scheme[1].lower()]}://{text[scheme.end() :]}"
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError:
        raise HistoryError(
            f"history postgresql://...: PostgreSQL needs psycopg 3: {install_extra_hint('history-pg')}"
        ) from None
    try:
        params = {key: str(value) for key, value in conninfo_to_dict(text).items() if value is not None}
    except Exception:  # libpq's message may quote the text, password included
        raise HistoryError(
            "the PostgreSQL history URL is not a connection string libpq accepts (it is not shown: it may "
            "hold a password): write it as postgresql://USER@HOST:PORT/DB, percent-encoding special "
            "characters, or as host=... dbname=... user=..., and give the password in PGPASSWORD"
        ) from None
    if any("@" in params.get(key, "") for key in _DISPLAYED):
        raise HistoryError(
            "the PostgreSQL history URL has an '@' that libpq reads as part of the host or database (it "
            "is not shown: it may hold a password): percent-encode an '@' in the password as %40, or give "
            "the password in PGPASSWORD"
        )
    display = _postgres_display(params)
    if "password" not in params and environ is not None and environ.get("PGPASSWORD"):
        params["password"] = environ["PGPASSWORD"]
    secrets = tuple(params[key] for key in _SECRET_KEYS if params.get(key))
    return HistoryLocation("postgresql", display, conninfo=make_conninfo(**params), secrets=secrets)


def _postgres_display(params: Mapping[str, str]) -> str:
    """`postgresql://USER:***@HOST:PORT/DB?sslmode=...` from the parameters naming the database only."""
    user = quote(params.get("user", ""), safe="")
    credentials = f"{user}:***@" if "password" in params else f"{user}@" if user else ""
    host = params.get("host") or params.get("hostaddr") or ""
    port = f":{params['port']}" if params.get("port") else ""
    database = quote(params.get("dbname", ""), safe="")
    query = "&".join(
        f"{key}={quote(params[key], safe='')}" for key in ("service", "sslmode") if params.get(key)
    )
    return terminal_safe(f"postgresql://{credentials}{host}{port}/{database}{'?' if query else ''}{query}")
