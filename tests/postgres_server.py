"""A real PostgreSQL server for tests and benchmarks: Debian's initdb and pg_ctl on loopback.

`PostgresServer` makes a throw-away cluster in a temporary folder, with password authentication
over TCP on a free loopback port (so a wrong password is refused as in production) and its Unix
socket in the same folder. PostgreSQL refuses to run as root: as root, the cluster belongs to an
unprivileged account (`postgres` when the package created it, else `nobody`) and each command runs
as that account through `setpriv`; its folder is then made where that account can reach it (a
private 0700 `TMPDIR` is root's alone). `postgres_binaries()` is None when PostgreSQL is not
installed, so a fixture can skip saying so.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from oxigraph_server import free_port

_SUPERUSER = "graphrag"


def postgres_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: Debian's /usr/lib/postgresql/N/bin (newest), else PATH."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_major, reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    return None


def _major(folder: str) -> int:
    name = Path(folder).parent.name
    return int(name) if name.isdigit() else 0


class PostgresServer:
    """A started cluster: `url(database)` has the password in it; `create_database` makes a database."""

    def __init__(self) -> None:
        binaries = postgres_binaries()
        if binaries is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self.binaries = binaries
        self.password = secrets.token_hex(12)
        self.user = _SUPERUSER
        self.host = "127.0.0.1"
        self.port = free_port()
        self._account = _unprivileged_account() if os.geteuid() == 0 else None
        parent = None if self._account is None else _temporary_parent_reachable_by(self._account)
        self.root = Path(tempfile.mkdtemp(prefix="graphrag-pg-", dir=parent))
        self.data = self.root / "data"
        self.started = False

    def start(self) -> PostgresServer:
        password_file = self.root / "password"
        password_file.write_text(self.password + "\n")
        if self._account is not None:
            for path in (self.root, password_file):
                os.chown(path, self._account.pw_uid, self._account.pw_gid)
        self._run(
            "initdb",
            "-D", str(self.data),
            "-U", self.user,
            f"--pwfile={password_file}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "-E", "UTF8",
            "--no-sync",
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses={self.host} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        self.started = True
        return self

    def url(
        self, database: str = "postgres", *, password: str | None = None, with_password: bool = True
    ) -> str:
        secret = (password if password is not None else self.password) if with_password else None
        credentials = f"{self.user}:{secret}" if secret else self.user
        return f"postgresql://{credentials}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL (with the password)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, program: str, *args: str, check: bool = True) -> None:
        command = [str(self.binaries / program), *args]
        if self._account is not None:
            command = [
                "setpriv",
                f"--reuid={self._account.pw_uid}",
                f"--regid={self._account.pw_gid}",
                "--clear-groups",
                *command,
            ]
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=self.root, env=_environment(), check=False
        )
        if check and done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr.strip()}\n{log[-2000:]}")


def _unprivileged_account() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged account (postgres, nobody) to run PostgreSQL as")


def _temporary_parent_reachable_by(account: pwd.struct_passwd) -> str:
    """The first temporary folder whose every ancestor `account` may enter: TMPDIR, else /tmp or /var/tmp."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        folder = Path(candidate).resolve()
        if folder.is_dir() and all(_may_enter(account, path) for path in (folder, *folder.parents)):
            return str(folder)
    raise RuntimeError(
        f"running as root and no temporary folder the {account.pw_name} account can enter for PostgreSQL's "
        "data: set TMPDIR to a folder every user may traverse"
    )


def _may_enter(account: pwd.struct_passwd, folder: Path) -> bool:
    status = folder.stat()
    if status.st_uid == account.pw_uid:
        return bool(status.st_mode & stat.S_IXUSR)
    if status.st_gid == account.pw_gid:
        return bool(status.st_mode & stat.S_IXGRP)
    return bool(status.st_mode & stat.S_IXOTH)


def _environment() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TZ")
    return {key: os.environ[key] for key in keep if key in os.environ} | {"LC_ALL": "C.UTF-8"}
