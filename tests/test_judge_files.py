"""Labels and reviews files: every bad input is an error naming the file, the line and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_graphrag_eval.errors import ConfigurationError, InputError
from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.judging.labels import load_labels
from pytest_graphrag_eval.judging.reviews import load_reviews

QUESTIONS = {"q1", "q2"}
METRICS = ["answer_correctness", "tone"]


def labels_file(tmp_path: Path, text: str, name: str = "labels.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(path: Path, metrics: list[str] = METRICS) -> list:
    return load_labels(path, shown=path.name, question_ids=QUESTIONS, metrics=metrics)


GOOD = """\
labels:
  - question_id: q1
    metric: answer_correctness
    answer: NO1
    verdict: pass
    by: alice
    date: 2026-11-20
  - question_id: q2
    metric: answer_correctness
    answer: NO2 and NO3
    claims: {reference: 1, actual: 2, matching: 1}
    by: alice
    date: 2026-11-20
    reason: one of two claims
"""


def test_good_labels_read_with_fingerprints_and_claims_as_f1(tmp_path: Path) -> None:
    first, second = load(labels_file(tmp_path, GOOD))
    assert (
        first.passed is True and first.fingerprint == answer_fingerprint("NO1") and first.date == "2026-11-20"
    )
    assert second.score == pytest.approx(2 * 1 * 0.5 / 1.5) and second.source == "labels.yaml:8"


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (
            ("question_id: q2", "question_id: q9"),
            "labels.yaml:8, question 'q9', field 'question_id'",
            "no question",
        ),
        (
            ("metric: answer_correctness\n    answer: NO2", "metric: relevance\n    answer: NO2"),
            "labels.yaml:8",
            "not a metric this run judges",
        ),
        (
            ("claims: {reference: 1, actual: 2, matching: 1}", "verdict: maybe"),
            "field 'verdict'",
            "must be pass or fail",
        ),
        (("claims: {reference: 1, actual: 2, matching: 1}", "score: 1.5"), "field 'score'", "from 0 to 1"),
        (
            ("claims: {reference: 1, actual: 2, matching: 1}", "verdict: pass\n    score: 1"),
            "field 'verdict'",
            "exactly one",
        ),
        (
            (
                "claims: {reference: 1, actual: 2, matching: 1}",
                "claims: {reference: 1, actual: 2, matching: 3}",
            ),
            "field 'claims'",
            "at most",
        ),
        (
            ("    by: alice\n    date: 2026-11-20\n    reason", "    date: 2026-11-20\n    reason"),
            "field 'by'",
            "is missing",
        ),
        (
            ("reason: one of two claims", "reason: x\n    fingerprint: sha256:0000000000000000"),
            "field 'fingerprint'",
            "edited",
        ),
        (("reason: one of two claims", "colour: red"), "field 'colour'", "unknown field"),
    ],
)
def test_bad_labels_name_the_line_and_field(
    tmp_path: Path, change: tuple[str, str], where: str, message: str
) -> None:
    assert change[0] in GOOD
    with pytest.raises(InputError) as raised:
        load(labels_file(tmp_path, GOOD.replace(change[0], change[1], 1)))
    assert where in str(raised.value) and message in str(raised.value)


def test_claims_of_a_custom_metric_are_the_wrong_kind(tmp_path: Path) -> None:
    text = GOOD.replace("metric: answer_correctness\n    answer: NO2", "metric: tone\n    answer: NO2")
    with pytest.raises(
        InputError, match=r"labels\.yaml:8.*claim counts are a verdict of answer_correctness only"
    ):
        load(labels_file(tmp_path, text))


def test_labels_without_any_judged_metric_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigurationError, match="labels need a metric judged by an LLM, and this run judges none"
    ):
        load(labels_file(tmp_path, GOOD), metrics=[])


def test_the_same_answer_labelled_twice_is_an_error(tmp_path: Path) -> None:
    text = GOOD + GOOD.split("labels:\n", 1)[1].split("  - question_id: q2")[0]
    with pytest.raises(
        InputError, match=re.escape("already labelled for answer_correctness at labels.yaml:2")
    ):
        load(labels_file(tmp_path, text))


def test_jsonl_labels_name_the_line(tmp_path: Path) -> None:
    good = {
        "question_id": "q1",
        "metric": "tone",
        "answer": "x",
        "score": 0.5,
        "by": "bob",
        "date": "2026-11-21",
    }
    path = labels_file(tmp_path, json.dumps(good) + "\n\n{not json\n", "labels.jsonl")
    with pytest.raises(InputError, match=r"labels.jsonl:3: invalid JSON"):
        load(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert load(path)[0].score == 0.5


JSONL_LABEL = '{"question_id": "q1", "metric": "tone", "answer": "x", "score": 0.5, "by": "bob", "date": "d"}'


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_jsonl_answer_holding_a_unicode_line_separator_is_read_whole(
    tmp_path: Path, separator: str
) -> None:
    """JSON text may hold these raw; splitting lines on them cut the record into two invalid lines."""
    answer = f"NO1{separator}NO2"
    line = JSONL_LABEL.replace('"x"', json.dumps(answer, ensure_ascii=False))
    path = labels_file(tmp_path, f"{line}\n{JSONL_LABEL.replace('q1', 'q2')}\n", "labels.jsonl")
    first, second = load(path)
    assert (first.answer, first.source, second.source) == (answer, "labels.jsonl:1", "labels.jsonl:2")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            JSONL_LABEL.replace('"score": 0.5', '"score": 0.9, "score": 0.1'),
            "labels.jsonl:1, field 'score': appears twice in one object",
        ),
        ("[" * 100_000 + "]" * 100_000, "labels.jsonl:1: invalid JSON: nested too deeply"),
        (
            JSONL_LABEL.replace("0.5", "1" + "0" * 400),
            "field 'score': must be a number from 0 to 1, got an integer beyond a float's range",
        ),
    ],
    ids=["repeated-key", "deep-nesting", "huge-integer"],
)
def test_a_hostile_jsonl_label_is_an_input_error_naming_line_and_field(
    tmp_path: Path, line: str, message: str
) -> None:
    """A repeated key kept its last value silently, deep nesting raised RecursionError, and a huge
    integer was echoed digit by digit."""
    with pytest.raises(InputError) as caught:
        load(labels_file(tmp_path, line + "\n", "labels.jsonl"))
    assert message in str(caught.value) and len(str(caught.value)) < 300


REVIEWS = """\
reviews:
  - question_id: q1
    answer: NO1
    verdict: pass
    by: bob
    date: 2026-11-28
    reason: right zone
"""


def reviews(tmp_path: Path, text: str):
    path = tmp_path / "reviews.yaml"
    path.write_text(text, encoding="utf-8")
    return load_reviews(path, shown="reviews.yaml", question_ids=QUESTIONS)


def test_a_review_applies_to_its_exact_answer_and_lapses_when_it_changes(tmp_path: Path) -> None:
    book = reviews(tmp_path, REVIEWS)
    applied = book.decide("q1", "NO1")
    assert applied is not None and applied.applied and applied.passed
    assert applied.note() == "decided by review: pass by bob on 2026-11-28: right zone"
    lapsed = book.decide("q1", "NO1 ")
    assert lapsed is not None and not lapsed.applied
    assert lapsed.note().startswith("review lapsed: the answer changed since bob reviewed it on 2026-11-28")
    assert book.decide("q2", "NO1") is None
    (label,) = book.labels()
    assert (
        label.passed and label.metric == "answer_correctness" and label.source == "review at reviews.yaml:2"
    )


def test_two_reviews_of_one_answer_that_disagree_are_an_error_naming_both(tmp_path: Path) -> None:
    second = (
        REVIEWS.split("reviews:\n", 1)[1].replace("verdict: pass", "verdict: fail").replace("bob", "carol")
    )
    with pytest.raises(InputError) as raised:
        reviews(tmp_path, REVIEWS + second)
    text = str(raised.value)
    assert text.startswith("reviews.yaml:8, question 'q1', field 'verdict'")
    assert "bob said pass at reviews.yaml:2, carol says fail here" in text


def test_two_reviews_that_agree_both_stand(tmp_path: Path) -> None:
    second = REVIEWS.split("reviews:\n", 1)[1].replace("bob", "carol")
    decision = reviews(tmp_path, REVIEWS + second).decide("q1", "NO1")
    assert decision is not None and decision.reviewers == "bob, carol"


def test_a_reviews_file_edited_into_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    broken = REVIEWS.replace("    reason: right zone", "    reason: [right zone")
    with pytest.raises(InputError, match=r"reviews.yaml:\d+: invalid YAML"):
        reviews(tmp_path, broken)


def test_a_review_of_an_unknown_question_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=re.escape("reviews.yaml:2, question 'q7', field 'question_id'")):
        reviews(tmp_path, REVIEWS.replace("q1", "q7"))
