"""Which part of a run this pytest process plays (plain, xdist controller or worker), decided once
in `pytest_configure` and passed on, so nothing else asks xdist."""

from __future__ import annotations

import enum

import pytest


class ProcessRole(enum.Enum):
    PLAIN = "plain"
    CONTROLLER = "controller"
    WORKER = "worker"

    @classmethod
    def of(cls, config: pytest.Config) -> ProcessRole:
        if hasattr(config, "workerinput"):
            return cls.WORKER
        if getattr(config.option, "numprocesses", None):
            return cls.CONTROLLER
        return cls.PLAIN

    @property
    def scores(self) -> bool:
        """Whether this process answers and scores questions (an xdist controller only collects theirs)."""
        return self is not ProcessRole.CONTROLLER


def worker_count(config: pytest.Config) -> int:
    """How many xdist workers share the run (1 outside xdist): each gets that share of a judge budget."""
    workerinput = getattr(config, "workerinput", None)
    return int((workerinput or {}).get("workercount", 1) or 1)
