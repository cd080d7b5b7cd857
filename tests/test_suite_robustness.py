"""The suite passes wherever a contributor runs it: as root under a private TMPDIR, and with the
unrelated pytest plugins of the test environment kept out of the pytest runs the tests start."""

from __future__ import annotations

import os
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

import psycopg
import pytest
from child_pytest import PLUGINS_LEFT_OUT_OF_CHILD_RUNS
from postgres_server import PostgresServer, postgres_binaries


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="the server user differs only as root")
@pytest.mark.skipif(postgres_binaries() is None, reason="PostgreSQL is not installed")
def test_postgres_starts_as_root_under_a_private_tmpdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private-tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))  # what TMPDIR=private gives a fresh process
    with PostgresServer() as server:
        root = server.root
        with psycopg.connect(server.create_database("reachable")) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
    assert not root.exists()  # the data folder is cleaned afterwards, wherever it was made


def test_child_runs_leave_out_the_unrelated_plugins(pytester: pytest.Pytester) -> None:
    installed = {entry.name: entry.value for entry in entry_points(group="pytest11")}
    left_out = [installed[name] for name in PLUGINS_LEFT_OUT_OF_CHILD_RUNS if name in installed]
    assert left_out, "the test environment installs the plugins the children leave out"
    pytester.makepyfile("def test_nothing():\n    pass\n")
    for run in (pytester.runpytest_inprocess, pytester.runpytest_subprocess):
        loaded = run("--trace-config").stdout.str()
        assert f"<module '{installed['graphrag_eval']}'" in loaded, "ours still loads by its entry point"
        for module in left_out:
            assert f"<module '{module}'" not in loaded
