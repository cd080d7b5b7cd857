"""The steps scorer's shortcut past its step checks: taken only where the checks find nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus.reference_steps import SPARQL_RESULTS_MEDIA_TYPE
from pytest_graphrag_eval.corpus.response_records import actual_step_problems
from pytest_graphrag_eval.steps.scorer import plainly_scorable, sparql_output_problems


class _Step(Mapping[str, Any]):
    """A step that is a mapping but not a dict (the checks read it; the shortcut declines it)."""

    def __init__(self, fields: dict[str, Any]):
        self._fields = fields

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Any:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


outputs = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.dictionaries(st.sampled_from(["head", "boolean"]), st.booleans(), max_size=1),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
fields = st.fixed_dictionaries(
    {"name": st.sampled_from(["sparql_query", "search"])},
    optional={"status": st.sampled_from(["success", "error", "ok", None, 1]), "output": outputs},
)
steps = st.lists(
    st.one_of(fields, fields.map(_Step), st.sampled_from([None, "a step", 3])),
    max_size=4,
)


@given(steps)
def test_the_shortcut_is_taken_only_when_no_check_finds_a_problem(actual: list[Any]) -> None:
    reference = [[{"name": "sparql_query", "output_media_type": SPARQL_RESULTS_MEDIA_TYPE}]]
    problems = actual_step_problems(actual) + sparql_output_problems(reference, actual)
    if plainly_scorable(actual):
        assert problems == []


def test_the_shortcut_is_taken_for_the_usual_steps() -> None:
    usual = [
        {"name": "search", "status": "success", "output": "text"},
        {"name": "sparql_query", "status": "error", "output": None},
        {"name": "sparql_query", "status": "success", "output": {"head": {}, "boolean": True}},
        {"name": "sparql_query", "status": "success"},
    ]
    assert plainly_scorable(usual)
    assert not plainly_scorable([*usual, {"name": "sparql_query", "status": "success", "output": 3}])
    assert not plainly_scorable([{"name": "search", "output": "text"}])  # no status
