"""The part of a result that is compared with graphrag-eval's (conformance test, differential benchmark).

tests/conformance/graphrag_eval_driver.py builds the same shape from graphrag-eval's own results; it runs
in graphrag-eval's Python 3.12 environment and cannot import this package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def comparable_outcome(result: Mapping[str, Any]) -> dict[str, Any]:
    """Status, error, steps_score and which actual step each reference step matched."""
    groups = result.get("reference_steps")
    return {
        "outcome": "result",
        "status": result.get("status"),
        "error": result.get("error"),
        "steps_score": result.get("steps_score"),
        "matches": None if groups is None else [[step.get("matches") for step in group] for group in groups],
    }
