"""pytest-randomly beside the plugin (issue 44): the items run in a shuffled order, and the example
project's report is the same as without it (timings aside): results are kept in corpus order."""

from __future__ import annotations

import pytest
from beside_support import (
    EXAMPLE_REPLAY,
    EXAMPLE_REPORT,
    example_project,
    load_json,
    unblocked,
    without_volatile,
)


def test_a_shuffled_run_writes_the_same_report(pytester: pytest.Pytester) -> None:
    example_project(pytester)
    plain = pytester.runpytest_subprocess(*EXAMPLE_REPLAY, "-v")
    expected = without_volatile(load_json(pytester.path / EXAMPLE_REPORT))
    shuffled = pytester.runpytest_subprocess(
        *unblocked("randomly"), "--randomly-seed=3", *EXAMPLE_REPLAY, "-v"
    )
    assert shuffled.ret == plain.ret
    order = [
        line.split(" ")[0] for line in shuffled.stdout.lines if line.startswith("example_project/corpus")
    ]
    plain_order = [
        line.split(" ")[0] for line in plain.stdout.lines if line.startswith("example_project/corpus")
    ]
    assert sorted(order) == sorted(plain_order) and order != plain_order  # really shuffled
    assert without_volatile(load_json(pytester.path / EXAMPLE_REPORT)) == expected
