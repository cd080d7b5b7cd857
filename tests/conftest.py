"""Shared fixtures: a loopback OpenAI-compatible server and judge settings pointing at it; the pytest
runs the tests start leave out the test environment's unrelated plugins."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

# numpy and scipy load their C extensions once per process: import them before pytester's in-process
# runs, whose sys.modules snapshot would otherwise unload them after the first baseline comparison.
import numpy  # noqa: F401

# The SDK (openai 3 with its httpx2 and httpcore2) loads once here: were it first loaded in a pytester
# run, the snapshot would unload part of it, and the next run's replies would fail the SDK's own
# stream type check ("connection failed (AssertionError)").
import openai  # noqa: F401

# psycopg's C extension keeps the exception classes of the first psycopg it met: import it here too.
import psycopg  # noqa: F401
import pytest
import scipy.special  # noqa: F401
from child_pytest import CHILD_RUN_OPTIONS
from hypothesis import settings
from postgres_server import PostgresServer, postgres_binaries

from pytest_graphrag_eval.llm import LLMSettings
from pytest_graphrag_eval.testing import FakeOpenAIServer

# Test files whose subject is the same on every Python: the docs' text and commands, the README, the HTML
# report in a browser, a checkout's printed paths, the history walk-through of the docs. They carry the
# `same_on_every_python` marker, and .ci/run runs them on its first Python only.
SAME_ON_EVERY_PYTHON = (
    "test_docs*.py",
    "test_readme_consistency.py",
    "test_html_report_browser.py",
    "test_no_local_paths.py",
    "test_history_example.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(fnmatch(item.path.name, pattern) for pattern in SAME_ON_EVERY_PYTHON):
            item.add_marker(pytest.mark.same_on_every_python)


# A test never asserts a duration: hypothesis' per-example deadline would, on a loaded machine.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

TEST_API_KEY = "sk-test-SECRET-7f3a9c1e5b2d4086"


@pytest.fixture(scope="session", autouse=True)
def child_runs_leave_out_unrelated_plugins() -> Iterator[None]:
    """Every pytest a test starts (subprocess or pytester) reads these options from PYTEST_ADDOPTS.

    Set per test process, not in pytest_configure, so that xdist's workers, started before, keep
    hypothesis' plugin for this suite's own property tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_ADDOPTS", f"{CHILD_RUN_OPTIONS} {os.environ.get('PYTEST_ADDOPTS', '')}".strip())
        yield


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's own fixture, whose runs leave out the same plugins (it clears PYTEST_ADDOPTS)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", CHILD_RUN_OPTIONS)
    return pytester


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started server that answers 401 unless the test API key is presented."""
    with FakeOpenAIServer(expected_api_key=TEST_API_KEY) as server:
        yield server


@pytest.fixture
def llm_settings(fake_openai: FakeOpenAIServer, tmp_path: Path) -> LLMSettings:
    """Judge settings for `fake_openai`: short timeout and backoff, a per-test cache directory."""
    return LLMSettings(
        base_url=fake_openai.base_url,
        api_key=TEST_API_KEY,
        cache_dir=tmp_path / "llm-cache",
        timeout=2.0,
        backoff_base=0.01,
        backoff_max=0.5,
    )


_databases = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on loopback for the session (Debian's initdb/pg_ctl, as a non-root user)."""
    if postgres_binaries() is None:
        pytest.skip("PostgreSQL is not installed: no initdb/pg_ctl (Debian: apt-get install postgresql)")
    with PostgresServer() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database on the session's server (its URL carries the password)."""
    return postgres_server.create_database(f"history_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty history of each kind: an SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "history.db")
    return str(request.getfixturevalue("postgres_url"))
