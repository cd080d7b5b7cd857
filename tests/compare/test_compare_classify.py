from __future__ import annotations

import pytest
from compare_support import result

from pytest_graphrag_eval.compare.classify import classify, passed
from pytest_graphrag_eval.report_model import Classification


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("passed", "failed", Classification.REGRESSED),
        ("xpassed", "failed", Classification.REGRESSED),
        ("failed", "passed", Classification.FIXED),
        ("failed", "xpassed", Classification.FIXED),
        ("passed", "passed", Classification.UNCHANGED),
        ("failed", "failed", Classification.UNCHANGED),
        ("skipped", "failed", Classification.UNCHANGED),
        ("passed", "xfailed", Classification.UNCHANGED),
        ("xfailed", "passed", Classification.UNCHANGED),
    ],
)
def test_outcome_changes(before: str, after: str, expected: Classification) -> None:
    assert classify(result("q1", before), result("q1", after)) is expected


def test_new_removed_and_edited() -> None:
    assert classify(None, result("q1")) is Classification.NEW
    assert classify(result("q1"), None) is Classification.REMOVED
    edited = result("q1", "failed", question_text="A reworded question?")
    assert classify(result("q1"), edited) is Classification.EDITED


def test_hash_is_computed_when_a_result_has_none() -> None:
    old = result("q1")
    del old["content_hash"]
    assert classify(old, result("q1", "failed")) is Classification.REGRESSED


def test_passed_maps_outcomes() -> None:
    assert [passed(o) for o in ("passed", "xpassed", "failed", "skipped", "xfailed", None)] == [
        True,
        True,
        False,
        None,
        None,
        None,
    ]
