"""A reference check's reasons name the stored output and the fresh result, never an agent's "actual" one.

Checking references against the graph reuses the agent-vs-reference explanation (steps/sparql_explain.py);
there the second result is the fresh result of the reference's own query, and a reason saying "actual
variable" sent readers looking for an agent answer that was never involved.
"""

from __future__ import annotations

import json

import pytest

from pytest_graphrag_eval.graph.references import describe_changes
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch

MEDIA = "application/sparql-results+json"


def _results(variables: list[str], rows: list[dict[str, str]]) -> str:
    bindings = [{name: {"type": "literal", "value": value} for name, value in row.items()} for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


STORED = {
    "name": "sparql_query",
    "output_media_type": MEDIA,
    "output": _results(["zone", "capacity"], [{"zone": "NO1", "capacity": "3590.0"}]),
}


@pytest.mark.parametrize(
    ("fresh", "wording"),
    [
        (
            _results(
                ["zone", "capacity"],
                [{"zone": "NO1", "capacity": "3840.0"}, {"zone": "NO1", "capacity": "1"}],
            ),
            "no variable of the fresh result has the same values as required column(s) capacity",
        ),
        (_results(["zone"], [{"zone": "NO1"}]), "but the fresh result has only 1"),
        (_results(["zone", "capacity"], []), "the fresh result is empty and the other is not"),
        ("not json", "the fresh output is not SPARQL results JSON"),
    ],
)
def test_a_stale_reference_is_explained_against_the_fresh_result(fresh: str, wording: str) -> None:
    reason = describe_changes(STORED, fresh, MEDIA)["reason"]
    assert wording in reason and "actual" not in reason


def test_an_agents_result_is_still_the_actual_one() -> None:
    agent = _results(["z", "c"], [{"z": "NO1", "c": "1"}, {"z": "NO1", "c": "2"}])
    reason = explain_sparql_mismatch(STORED, agent)["reason"]
    assert "no actual variable has the same values as required column(s) capacity" in reason
