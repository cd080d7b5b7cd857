"""Response files: every accepted layout, and errors naming file, line, question and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphrag_eval import ResponseError, load_responses, run_evaluation
from pytest_graphrag_eval.corpus.response_records import ResponseRecord, responses_from_memory

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
        (
            [SUCCESS, {**SUCCESS, "question_id": "q3", "status": "failed"}],
            "responses.jsonl:2, question 'q3', field 'status': must be success or error, got 'failed' "
            "(a failed run is `status: error` with the reason in `error`)",
        ),
        ([{**SUCCESS, "status": "ok"}], "responses.jsonl:1, question 'q1', field 'status'"),
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


def test_a_status_other_than_success_is_fine_with_an_error_reason(tmp_path: Path) -> None:
    """`error` decides, as in graphrag-eval: a recorder's own status word does not matter then."""
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps({"question_id": "q1", "status": "failed", "error": "timeout"}) + "\n")
    assert load_responses(path)["q1"]["status"] == "error"


def test_answers_keyed_by_question_id_name_the_question(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"q1": "OSLO", "q2": "BERGEN"}), encoding="utf-8")
    with pytest.raises(ResponseError) as raised:
        load_responses(path)
    assert str(raised.value) == (
        f"{path}, question 'q1': a response must be an object, got text; an answer alone is written "
        '{"actual_answer": "..."} (see the responses format)'
    )


def test_a_json_list_names_the_position(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps([SUCCESS, {"actual_answer": "x"}]), encoding="utf-8")
    with pytest.raises(
        ResponseError, match=r"responses.json, list item \[1\], field 'question_id': is missing"
    ):
        load_responses(path)


def test_loaded_responses_are_dicts_that_remember_their_line(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps(SUCCESS) + "\n" + json.dumps({"question_id": "q2", "steps": []}) + "\n")
    responses = load_responses(path)
    assert responses["q2"] == {"question_id": "q2", "actual_steps": []}
    assert isinstance(responses["q2"], ResponseRecord) and responses["q2"].source.line == 2
    assert json.loads(json.dumps(responses["q1"])) == SUCCESS


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            [SUCCESS, {**SUCCESS, "question_id": "q2", "status": "failed"}],
            "in-memory responses[1], question 'q2', ",
        ),
        ({"q1": {**SUCCESS, "status": "failed"}}, "in-memory responses, question 'q1', field 'status'"),
        ({"q1": "OSLO"}, "in-memory responses, question 'q1': a response must be an object, got text"),
        (
            [SUCCESS, SUCCESS],
            "in-memory responses[1], question 'q1', field 'question_id': duplicate response",
        ),
        (
            {"q9": SUCCESS},
            "in-memory responses, question 'q9', field 'question_id': does not match its key 'q9'",
        ),
        ([{"actual_answer": "x"}], "in-memory responses[0], field 'question_id': is missing"),
        (
            "responses.jsonl",
            "in-memory responses: must be a dict keyed by question id or a list of responses, "
            "got str; to read a responses file, call load_responses(path)",
        ),
    ],
)
def test_in_memory_responses_are_checked_like_a_file(data: object, message: str) -> None:
    with pytest.raises(ResponseError) as raised:
        responses_from_memory(data)
    assert message in str(raised.value)


def test_in_memory_forms_normalise_like_a_file(tmp_path: Path) -> None:
    recorded = [{"question_id": "q1", "steps": [{"name": "s", "status": "success"}]}, ERROR]
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in recorded), encoding="utf-8")
    from_file = {qid: records[0] for qid, records in responses_from_memory(load_responses(path)).items()}
    by_id = {
        qid: records[0]
        for qid, records in responses_from_memory({r["question_id"]: r for r in recorded}).items()
    }
    listed = {qid: records[0] for qid, records in responses_from_memory(recorded).items()}
    one = {qid: records[0] for qid, records in responses_from_memory(recorded[0]).items()}
    assert from_file == by_id == listed
    assert one == {"q1": from_file["q1"]}
    assert from_file["q1"]["actual_steps"] == [{"name": "s", "status": "success"}]
    assert from_file["q1"].source.file == str(path)  # a loaded record keeps its file and line
    assert listed["q2"].source.origin == "in-memory responses[1]"


def test_run_evaluation_with_a_loaded_file_names_its_line(tmp_path: Path) -> None:
    corpus = [
        {
            "template_id": "t",
            "questions": [
                {"id": "q1", "question_text": "?", "reference_steps": [[{"name": "s", "output": "x"}]]}
            ],
        }
    ]
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps({"question_id": "q1", "actual_steps": [{"name": "s", "output": "x"}]}) + "\n")
    for responses, where in (
        (load_responses(path), f"{path}:1"),
        ([json.loads(path.read_text())], "in-memory responses[0]"),
    ):
        [result] = run_evaluation(corpus, responses)
        assert result["steps_score_error"] == (
            f"unscorable agent steps: {where}, question 'q1', field 'actual_steps[0].status': is missing "
            "(expected success or error)"
        )


@pytest.mark.parametrize(
    "odd_line",
    [
        '{"question_id": "q3", "actual_steps": [{"name": "s", "output": NaN}]}',
        '{"question_id": "q3", "total_tokens": 123456789012345678901}',
    ],
    ids=["nan", "beyond-64-bits"],
)
def test_jsonl_read_from_bytes_or_text_gives_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd_line: str
) -> None:
    """JSONL is read from the file's bytes when orjson vouches for every line, else as text: same records."""
    pytest.importorskip("orjson")
    from pytest_graphrag_eval.formats import json_text

    plain, odd = tmp_path / "plain.jsonl", tmp_path / "odd.jsonl"
    lines = [json.dumps(SUCCESS, ensure_ascii=False), "", json.dumps({**ERROR, "error": "Zürich 東京"})]
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    odd.write_text("\n".join([*lines, odd_line]) + "\n", encoding="utf-8")
    fast = {path.name: load_responses(path) for path in (plain, odd)}
    monkeypatch.setattr(json_text, "orjson", None)
    slow = {path.name: load_responses(path) for path in (plain, odd)}
    for name, records in fast.items():
        assert repr(records) == repr(slow[name])
        assert [r.source for r in records.values()] == [r.source for r in slow[name].values()]
    assert [r.source.line for r in fast["odd.jsonl"].values()] == [1, 3, 4]


def test_a_location_named_for_a_question_keeps_every_other_field() -> None:
    """`for_question` builds the location field by field: a field added to SourceLocation and not
    carried over would lose where a response came from."""
    import dataclasses

    from pytest_graphrag_eval.errors import SourceLocation

    values = {field.name: f"value of {field.name}" for field in dataclasses.fields(SourceLocation)}
    location = SourceLocation(**values)  # type: ignore[arg-type]
    assert location.for_question("q7") == dataclasses.replace(location, question_id="q7")


def _unedited(record: dict) -> None:
    pass


def _edit_steps_name(record: dict) -> None:
    record["actual_steps"][0]["name"] = 5


def _rename_steps(record: dict) -> None:
    record["steps"] = record.pop("actual_steps")


@pytest.mark.parametrize(
    "edit",
    [
        _unedited,
        lambda record: record.update(error={"code": 503}),
        lambda record: record.update(status="error"),
        lambda record: record.update(error="timeout", status="success"),
        lambda record: record.update(status="failed"),
        lambda record: record.update(status="success"),
        lambda record: record.update(attempt=0),
        lambda record: record.update(attempt=2),
        lambda record: record.update(input_tokens=-1),
        lambda record: record.update(input_tokens=2.5),
        lambda record: record.update(elapsed_sec=float("nan")),
        lambda record: record.update(actual_answer=7),
        lambda record: record.update(actual_steps={"name": "s"}),
        lambda record: record.update(question_id=1),
        _edit_steps_name,
        _rename_steps,
    ],
)
def test_loaded_records_are_checked_again_as_plain_responses_are(tmp_path: Path, edit: object) -> None:
    """A record a responses file gave is checked again in memory (it may have been edited since) and
    normalised exactly as the same content would be; unedited, it is returned as it is, not copied."""
    path = tmp_path / "responses.jsonl"
    steps = [{"name": "s", "status": "success", "output": "x"}]
    path.write_text(json.dumps({**SUCCESS, "actual_steps": steps, "input_tokens": 3}) + "\n")
    loaded = load_responses(path)
    assert callable(edit)
    edit(loaded["q1"])
    plain = {"q1": json.loads(json.dumps(dict(loaded["q1"])))}
    try:
        expected = responses_from_memory(plain)["q1"]
    except ResponseError as error:
        with pytest.raises(ResponseError) as raised:
            responses_from_memory(loaded)
        assert str(raised.value).startswith(f"{path}:1, ")
        assert str(raised.value).split(", ", 1)[1] == str(error).split(", ", 1)[1]
        return
    [record] = responses_from_memory(loaded)["q1"]
    [again] = expected
    assert record == again and record.attempt == again.attempt and record.source is loaded["q1"].source
    if record is loaded["q1"]:  # returned as it is only when the full path would make the same record
        assert dict(record) == again and record.attempt == again.attempt
    if edit is _unedited:
        assert record is loaded["q1"]
