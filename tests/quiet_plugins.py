"""The pytest plugins the test environment holds only for tests/test_with_*.py.

Installed, they load in every pytest run of the environment (pytest-randomly reorders items and
reseeds `random`, pytest-rerunfailures starts a socket server where xdist is installed, pytest-sugar
takes over a terminal). The suite's own run blocks them in `addopts` (pyproject.toml); the conftest
blocks them in every pytest it starts (pytester's runs, subprocesses) through `PYTEST_ADDOPTS`, and a
test_with_* test unblocks the one plugin it is about.
"""

from __future__ import annotations

# Their entry-point names: `-p no:NAME` blocks a plugin by the name it is registered under.
OTHER_PLUGINS = (
    "randomly",
    "sugar",
    "rerunfailures",
    "timeout",
    "repeat",
    "pytest_cov",
    "html",
    "html_fixtures",
    "metadata",
    "pytest_jsonreport",
)


def blocked(*wanted: str) -> list[str]:
    """`-p no:NAME` for each of the other plugins but `wanted`."""
    return [flag for name in OTHER_PLUGINS if name not in wanted for flag in ("-p", f"no:{name}")]


QUIET_ADDOPTS = " ".join(blocked())
