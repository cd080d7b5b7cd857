"""The lexical claims judge and the deterministic exact match / token F1 scorer."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.answers.lexical import (
    LexicalCorrectness,
    claims_match,
    lexical_counts,
    matching_pairs,
    split_claims,
)
from pytest_graphrag_eval.answers.metric import AnswerInputs
from pytest_graphrag_eval.answers.scorers import DeterministicAnswerScorer
from pytest_graphrag_eval.corpus.reference_corpus import corpus_from_data
from pytest_graphrag_eval.scoring import ScoringContext

SEED_ANSWER = (
    "The following transformers are located within the Substation OSLO:\n"
    "1. **OSLO T2** (IRI: `urn:uuid:f1769de8-9aeb-11e5-91da-b8763fd99c5f`)\n"
    "2. **OSLO T1** (IRI: `urn:uuid:f1769dd6-9aeb-11e5-91da-b8763fd99c5f`)"
)


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("OSLO T1, OSLO T2", ["OSLO T1", "OSLO T2"]),
        ("HALDEN; KONGSBERG; SYLLING", ["HALDEN", "KONGSBERG", "SYLLING"]),
        ("Connected to STAVANGER: ARENDAL, KVILLDAL and SANDEFJORD.", ["ARENDAL", "KVILLDAL", "SANDEFJORD"]),
        (
            "The capital is Paris. It has 2,100,000 inhabitants!",
            ["The capital is Paris.", "It has 2,100,000 inhabitants!"],
        ),
        ("- first item\n* second item\n3) third item\n\n", ["first item", "second item", "third item"]),
        (
            "Paris is the capital of France, and it is a large and old city.",
            ["Paris is the capital of France, and it is a large and old city."],
        ),
        ("The. A. ...", []),
    ],
)
def test_split_claims(text: str, claims: list[str]) -> None:
    assert split_claims(text) == claims


def test_list_lead_in_line_is_not_a_claim() -> None:
    assert split_claims(SEED_ANSWER) == [
        "OSLO T2 (IRI: urn:uuid:f1769de8-9aeb-11e5-91da-b8763fd99c5f)",
        "OSLO T1 (IRI: urn:uuid:f1769dd6-9aeb-11e5-91da-b8763fd99c5f)",
    ]


def test_seed_example_scores_like_the_seed_llm_judge() -> None:
    counts = lexical_counts("OSLO T1, OSLO T2", SEED_ANSWER)
    assert counts is not None
    assert (counts.reference, counts.actual, counts.matching) == (2, 2, 2)
    assert counts.f1 == 1.0


def test_claims_match_is_normalized_whole_word_containment() -> None:
    assert claims_match("oslo t1", "The transformer **OSLO T1**.")
    assert claims_match("The answer is OSLO T1", "Oslo T1")
    assert not claims_match("OSLO T1", "OSLO T10")
    assert not claims_match("the", "the answer")  # nothing left after normalization


def test_matching_is_one_to_one_and_maximum() -> None:
    # Greedy would give "A B" to reference "A" and leave reference "A B" unmatched.
    reference = ["A1", "A1 B1"]
    actual = ["A1 B1", "A1"]
    assert matching_pairs(reference, actual) == [(0, 1), (1, 0)]
    assert len(matching_pairs(["X1", "X1"], ["X1"])) == 1


def test_a_sentence_naming_several_reference_claims_counts_as_that_many() -> None:
    counts = lexical_counts("OSLO T1, OSLO T2", "The transformers in OSLO are OSLO T1 and OSLO T2.")
    assert counts is not None and (counts.reference, counts.actual, counts.matching) == (2, 2, 2)
    extra = lexical_counts("OSLO T1, OSLO T2", "OSLO T1 and OSLO T2. Also OSLO T3 is there.")
    assert extra is not None and (extra.actual, extra.matching) == (3, 2)


def test_partial_answer_counts_and_reason() -> None:
    counts = lexical_counts("ARENDAL, BLAFALLI, STAVANGER, KVILLDAL", "ARENDAL, STAVANGER, OSLO")
    assert counts is not None
    assert (counts.reference, counts.actual, counts.matching) == (4, 3, 2)
    assert counts.recall == 0.5 and counts.precision == pytest.approx(2 / 3)
    assert (
        counts.reason
        == "2 of 4 reference claims found among 3 answer claims; missing: 'BLAFALLI'; 'KVILLDAL'"
    )


claim_text = st.lists(
    st.sampled_from(["OSLO T1", "OSLO T2", "ARENDAL", "the", "Paris is big", "x"]), min_size=0, max_size=6
).map(", ".join)


@given(claim_text, claim_text)
def test_counts_are_consistent_for_any_texts(reference: str, actual: str) -> None:
    counts = lexical_counts(reference, actual)
    if counts is None:
        assert not split_claims(reference) or not split_claims(actual)
        return
    assert 0 <= counts.matching <= min(counts.reference, counts.actual)
    assert 0.0 <= counts.f1 <= 1.0


def judge(inputs: AnswerInputs) -> dict:
    return asyncio.run(LexicalCorrectness().evaluate(inputs, 0)).keys


def test_lexical_judge_keys_and_best_alternative() -> None:
    keys = judge(AnswerInputs("Where?", ["Berlin", "OSLO T1, OSLO T2"], SEED_ANSWER))
    assert keys["answer_judge"] == "lexical"
    assert keys["answer_f1"] == 1.0 and keys["answer_reference_claims_count"] == 2
    assert "answer_eval_error" not in keys


@pytest.mark.parametrize(
    ("inputs", "problem"),
    [
        (AnswerInputs("Q?", "OSLO", ""), "the actual answer is empty"),
        (AnswerInputs("Q?", " ", "OSLO"), "the reference answer is empty"),
        (AnswerInputs("Q?", "OSLO", "..."), "the lexical judge found no claims to compare"),
    ],
)
def test_lexical_judge_reports_errors_not_zero_scores(inputs: AnswerInputs, problem: str) -> None:
    keys = judge(inputs)
    assert keys["answer_eval_error"].startswith(problem)
    assert "answer_f1" not in keys


def score_deterministic(reference: object, answer: str | None) -> dict:
    question = {"id": "q1", "question_text": "Q?"}
    if reference is not None:
        question["reference_answer"] = reference
    corpus = corpus_from_data([{"template_id": "t", "questions": [question]}])
    response = {} if answer is None else {"actual_answer": answer}
    return asyncio.run(
        DeterministicAnswerScorer().score(next(corpus.questions()), response, ScoringContext())
    )


def test_exact_match_and_token_f1_over_alternatives() -> None:
    assert score_deterministic("OSLO T1", "The oslo t1.") == {
        "answer_exact_match": 1.0,
        "answer_token_f1": 1.0,
    }
    keys = score_deterministic(["Berlin", "Oslo Norway"], "Oslo")
    assert keys["answer_exact_match"] == 0.0
    assert keys["answer_token_f1"] == pytest.approx(2 / 3)


def test_deterministic_scorer_skips_without_answer_or_reference() -> None:
    assert score_deterministic(None, "Oslo") == {}
    assert score_deterministic("Oslo", None) == {}
