"""How one question changed between a baseline run and the current run.

`passed`/`xpassed` pass, `failed` fails; `skipped`, `xfailed` and `interrupted` say nothing about the
agent and `not_evaluated` (a budget) is its own class, so none of them is ever regressed or fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.compare.hashing import content_hash
from pytest_graphrag_eval.report_model import Classification

# "interrupted": scored, but Ctrl-C stopped the run before its item gave a verdict.
# "not_evaluated": the judge budget was reached before the question was fully scored.
NOT_EVALUATED = "not_evaluated"
OUTCOMES = frozenset({"passed", "failed", "xfailed", "xpassed", "skipped", "interrupted", NOT_EVALUATED})
_PASSING = frozenset({"passed", "xpassed"})
_FAILING = frozenset({"failed"})


def passed(outcome: str | None) -> bool | None:
    """True/False for a pass/fail outcome; None for skipped, xfailed or unknown ones."""
    if outcome in _PASSING:
        return True
    if outcome in _FAILING:
        return False
    return None


def stored_hash(result: Mapping[str, Any]) -> str:
    """The result's `content_hash`, computed from its fields when it has none."""
    value = result.get("content_hash")
    return value if isinstance(value, str) else content_hash(result)


def classify(baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> Classification:
    """The change of one question; either side is None when the question is only in the other run."""
    if baseline is None and current is None:
        raise ValueError("a question must be in at least one run")
    if baseline is None:
        return Classification.NEW
    if current is None:
        return Classification.REMOVED
    if NOT_EVALUATED in (baseline.get("outcome"), current.get("outcome")):
        return Classification.NOT_EVALUATED
    if stored_hash(baseline) != stored_hash(current):
        return Classification.EDITED
    before, after = passed(baseline.get("outcome")), passed(current.get("outcome"))
    if before is True and after is False:
        return Classification.REGRESSED
    if before is False and after is True:
        return Classification.FIXED
    return Classification.UNCHANGED
