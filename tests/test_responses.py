"""Response files: every accepted layout, and errors naming file, line, question and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphrag_eval import ResponseError, load_responses

SUCCESS = {"question_id": "q1", "actual_answer": "OSLO", "actual_steps": [], "elapsed_sec": 1.5}
ERROR = {"question_id": "q2", "status": "error", "error": "timeout"}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"q1": SUCCESS, "q2": ERROR}),
        json.dumps({"q1": {k: v for k, v in SUCCESS.items() if k != "question_id"}, "q2": ERROR}),
        json.dumps([SUCCESS, ERROR]),
        json.dumps(SUCCESS) + "\n\n" + json.dumps(ERROR) + "\n",
    ],
    ids=["object", "object-without-ids", "list", "jsonl"],
)
def test_layouts(tmp_path: Path, text: str) -> None:
    path = tmp_path / "responses.json"
    path.write_text(text, encoding="utf-8")
    responses = load_responses(path)
    assert responses["q1"]["actual_answer"] == "OSLO"
    assert responses["q2"]["status"] == "error"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([SUCCESS, "{oops"], "responses.jsonl:2: invalid JSON line"),
        ([SUCCESS, {**SUCCESS}], "responses.jsonl:2, question 'q1', field 'question_id': duplicate response"),
        ([{"actual_answer": "x"}], "responses.jsonl:1, field 'question_id': is missing"),
        ([{**SUCCESS, "actual_steps": {}}], "question 'q1', field 'actual_steps': must be a list of steps"),
        ([{**SUCCESS, "actual_steps": [{"id": "a"}]}], "field 'actual_steps[0].name': is missing"),
        ([{**SUCCESS, "steps": [], "actual_steps": []}], "field 'steps': has both 'steps'"),
        ([{**SUCCESS, "input_tokens": "many"}], "field 'input_tokens': must be a number"),
        ([{**SUCCESS, "actual_answer": 42}], "field 'actual_answer': must be text"),
    ],
)
def test_errors_name_location(tmp_path: Path, lines: list, message: str) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    with pytest.raises(ResponseError) as raised:
        load_responses(path)
    assert message in str(raised.value)


def test_key_and_question_id_must_agree(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"q9": SUCCESS}), encoding="utf-8")
    with pytest.raises(ResponseError, match="does not match its key 'q9'"):
        load_responses(path)


def test_empty_file_is_no_responses(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert load_responses(path) == {}
