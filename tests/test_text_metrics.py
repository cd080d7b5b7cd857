"""SQuAD-style answer normalization and the deterministic answer metrics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.metrics.text import contains_any, exact_match, normalize_answer, rouge_l, token_f1


def test_normalization_drops_case_punctuation_articles_and_extra_spaces() -> None:
    assert normalize_answer("  The  Seeker, of an Apple! ") == "seeker of apple"
    assert normalize_answer("Theory") == "theory"  # articles only as whole words


def test_exact_match_is_best_over_references() -> None:
    assert exact_match("the Seeker.", ["Keeper", "seeker"]) == 1.0
    assert exact_match("a seeker of sorts", "seeker") == 0.0


def test_token_f1() -> None:
    assert token_f1("Albus Dumbledore", ["Dumbledore"]) == pytest.approx(2 / 3)
    assert token_f1("Albus Dumbledore", ["Dumbledore", "Albus Dumbledore"]) == 1.0
    assert token_f1("Harry", ["Dumbledore"]) == 0.0
    assert token_f1("the", ["a"]) == 1.0  # both empty after normalization
    assert token_f1("the", ["Dumbledore"]) == 0.0
    assert token_f1("seeker seeker", ["seeker"]) == pytest.approx(2 / 3)  # repeated tokens count once each


def test_contains_any_matches_whole_tokens() -> None:
    assert contains_any("Harry plays as the Seeker.", ["seeker", "chaser"]) == 1.0
    assert contains_any("Harry plays as a seekers' coach", ["seeker"]) == 0.0
    assert contains_any("Albus Percival Dumbledore", ["Albus Dumbledore"]) == 0.0
    assert contains_any("anything at all", ["The"]) == 0.0  # a reference that normalizes to nothing


def test_rouge_l_is_best_over_references() -> None:
    assert rouge_l("Harry plays seeker", ["seeker"]) == pytest.approx(0.5)
    assert rouge_l("Harry plays seeker", ["chaser", "Harry plays seeker"]) == 1.0


@pytest.mark.parametrize("metric", [exact_match, token_f1, contains_any, rouge_l])
def test_no_references_is_an_error(metric) -> None:
    with pytest.raises(ValueError, match="no reference answers"):
        metric("x", [])


@given(st.text(max_size=30), st.lists(st.text(max_size=30), min_size=1, max_size=3))
def test_metrics_stay_in_unit_interval(prediction, references) -> None:
    for metric in (exact_match, token_f1, contains_any):
        assert 0.0 <= metric(prediction, references) <= 1.0
    assert exact_match(prediction, references) <= token_f1(prediction, references)
