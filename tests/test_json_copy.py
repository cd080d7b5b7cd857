"""Results' copies of steps share no container with the corpus, the recording or each other."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from pytest_graphrag_eval.evaluation import run_evaluation
from pytest_graphrag_eval.formats.json_copy import copy_json_like


def containers(value: Any) -> list[Any]:
    """Every dict and list inside `value`, itself included."""
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


def test_a_copy_is_equal_and_shares_no_container() -> None:
    shared = {"k": [1, 2.5, None, True, "é"]}
    value = {"a": [shared, shared, {"b": []}], "c": "text", "d": 3}
    copied = copy_json_like(value)
    assert copied == value
    originals = {id(item) for item in containers(value)}
    assert not originals & {id(item) for item in containers(copied)}


def test_other_objects_are_deep_copied() -> None:
    stamp = datetime(2025, 3, 1, tzinfo=UTC)
    value = [{"execution_timestamp": stamp, "pair": ([1], "x")}]
    copied = copy_json_like(value)
    assert copied == value and copied[0]["pair"][0] is not value[0]["pair"][0]


def test_a_structure_that_contains_itself_is_copied_as_deepcopy_does() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    copied = copy_json_like(loop)
    assert copied[1] is copied and copied is not loop


def test_editing_a_result_edits_neither_the_inputs_nor_another_result() -> None:
    output = '{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "urn:a"}}]}}'
    step = {"name": "sparql_query", "output": output, "output_media_type": "application/sparql-results+json"}
    corpus = [
        {"template_id": "t", "questions": [{"id": "q1", "question_text": "?", "reference_steps": [[step]]}]}
    ]
    actual = {"id": "c1", "name": "sparql_query", "status": "success", "output": output, "args": {"q": 1}}
    responses = {"q1": {"question_id": "q1", "actual_answer": "a", "actual_steps": [actual]}}
    before = copy.deepcopy((corpus, responses))
    first, second = run_evaluation(corpus, responses)[0], run_evaluation(corpus, responses)[0]
    first["reference_steps"][0][0]["args"] = {"edited": True}
    first["actual_steps"][0]["args"]["q"] = 2
    assert (corpus, responses) == before
    assert second["actual_steps"][0]["args"] == {"q": 1} and "args" not in second["reference_steps"][0][0]
