from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.compare.hashing import content_hash

STEPS = [[{"name": "sparql_query", "args": {"query": "select * where {?s ?p ?o}"}, "output": "[]"}]]


def question(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "question_text": "Which lines leave HAMAR?",
        "reference_answer": "L1, L2",
        "reference_steps": STEPS,
        "actual_answer": "L1",
        "steps_score": 0.5,
    }
    data.update(changes)
    return data


def test_hash_is_sha256_of_the_question_only() -> None:
    digest = content_hash(question())
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert content_hash(question(actual_answer="other", steps_score=0.0, outcome="failed")) == digest


def test_each_hashed_field_changes_the_hash() -> None:
    digest = content_hash(question())
    assert content_hash(question(question_text="Which lines leave TONSTAD?")) != digest
    assert content_hash(question(reference_answer="L1")) != digest
    edited_steps = [[{**STEPS[0][0], "output": "[1]"}]]
    assert content_hash(question(reference_steps=edited_steps)) != digest


def test_run_annotations_on_reference_steps_are_ignored() -> None:
    marked = [[{**STEPS[0][0], "matches": "call_123"}]]
    assert content_hash(question(reference_steps=marked)) == content_hash(question())


@given(st.permutations(list(question().items())), st.permutations(sorted(STEPS[0][0])))
def test_hash_is_stable_under_key_order(items: list[tuple[str, object]], step_keys: list[str]) -> None:
    reordered = dict(items)
    reordered["reference_steps"] = [[{key: STEPS[0][0][key] for key in step_keys}]]
    assert content_hash(reordered) == content_hash(question())
