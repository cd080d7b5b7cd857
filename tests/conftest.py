"""Shared fixtures: a loopback OpenAI-compatible server and judge settings pointing at it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

# numpy and scipy load their C extensions once per process: import them before pytester's in-process
# runs, whose sys.modules snapshot would otherwise unload them after the first baseline comparison.
import numpy  # noqa: F401

# psycopg's C extension keeps the exception classes of the first psycopg it met: import it here too.
import psycopg  # noqa: F401
import pytest
import scipy.special  # noqa: F401
from hypothesis import settings
from postgres_server import PostgresServer, postgres_binaries

from pytest_graphrag_eval.llm import LLMSettings
from pytest_graphrag_eval.testing import FakeOpenAIServer

# A test never asserts a duration: hypothesis' per-example deadline would, on a loaded machine.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

TEST_API_KEY = "sk-test-SECRET-7f3a9c1e5b2d4086"


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
