"""evaluate_run agrees with pytrec_eval (trec_eval) exactly; metric names parse as pytrec_eval's."""

from __future__ import annotations

import random

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.retrieval import average_precision, evaluate_run, recall_at_k

ALL_MEASURES = ["P", "recall", "success", "ndcg_cut", "map_cut", "map", "recip_rank", "ndcg"]
CUT_MEASURES = ["P", "recall", "success", "ndcg_cut", "map_cut"]


def reference(qrels, run, metrics, relevance_level=1):
    return pytrec_eval.RelevanceEvaluator(qrels, metrics, relevance_level=relevance_level).evaluate(run)


doc_ids = st.sampled_from([f"d{i}" for i in range(12)] + ["D1", "d01", "é", "z"])
scores = st.one_of(st.sampled_from([0, 1, 2, 0.5, -1.0]), st.floats(-5, 5, allow_nan=False))
qrels_strategy = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q4"]),
    st.dictionaries(doc_ids, st.integers(-1, 3), max_size=10).filter(
        # trec_eval misbehaves on queries whose every judgement is negative; keep one >= 0.
        lambda judged: not judged or max(judged.values()) >= 0
    ),
    max_size=4,
)
run_strategy = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q5"]), st.dictionaries(doc_ids, scores, max_size=14), max_size=4
)
metric_names = st.one_of(
    st.sampled_from(ALL_MEASURES),
    st.builds(lambda name, k: f"{name}_{k}", st.sampled_from(CUT_MEASURES), st.integers(1, 15)),
)


@settings(max_examples=400, deadline=None)
@given(qrels_strategy, run_strategy, st.sets(metric_names, min_size=1, max_size=5), st.integers(1, 2))
def test_values_equal_pytrec_eval(qrels, run, metrics, relevance_level) -> None:
    assert evaluate_run(qrels, run, metrics, relevance_level=relevance_level) == reference(
        qrels, run, metrics, relevance_level
    )


def test_large_random_runs_with_ties_equal_pytrec_eval() -> None:
    rng = random.Random(7)
    metrics = {
        "P",
        "recall",
        "success",
        "ndcg_cut",
        "map_cut",
        "map",
        "recip_rank",
        "ndcg",
        "P_3",
        "success_2",
    }
    qrels = {
        f"q{i}": {f"d{j}": rng.choice([0, 0, 1, 1, 2, 3]) for j in rng.sample(range(300), rng.randint(1, 60))}
        for i in range(200)
    }
    run = {
        f"q{i}": {
            f"d{j}": rng.choice([1.0, 0.5, rng.random()]) for j in rng.sample(range(300), rng.randint(0, 250))
        }
        for i in range(210)
    }
    assert evaluate_run(qrels, run, metrics) == reference(qrels, run, metrics)


def test_ties_are_broken_by_document_id_descending() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}  # "b" > "a", so "b" is ranked first
    assert evaluate_run(qrels, run, {"recip_rank"}) == {"q": {"recip_rank": 0.5}}


def test_scores_compare_as_32_bit_floats_like_trec_eval() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 0.1, "b": 0.1 - 1e-9}}  # equal as 32-bit floats: tie, "b" first
    assert (
        evaluate_run(qrels, run, {"recip_rank"})
        == reference(qrels, run, {"recip_rank"})
        == {"q": {"recip_rank": 0.5}}
    )


def test_queries_need_both_judgements_and_a_run() -> None:
    qrels = {"judged": {"a": 1}, "empty_judgements": {}, "not_run": {"a": 1}}
    run = {"judged": {}, "empty_judgements": {"a": 1}, "unjudged": {"a": 1}}
    assert evaluate_run(qrels, run, {"map", "P_5"}) == {"judged": {"map": 0.0, "P_5": 0.0}}
    assert evaluate_run(qrels, {}, {"map"}) == {}


@pytest.mark.parametrize(
    ("metrics", "keys"),
    [
        ({"P"}, {"P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"}),
        ({"success"}, {"success_1", "success_5", "success_10"}),
        ({"P", "P_10"}, {"P_10"}),
        ({"P_10", "P_5"}, {"P_5", "P_10"}),
        ({"recall_5,10"}, {"recall_5", "recall_10"}),
        ({"ndcg", "ndcg_cut_3", "map", "recip_rank"}, {"ndcg", "ndcg_cut_3", "map", "recip_rank"}),
        (set(), set()),
    ],
)
def test_metric_names_expand_as_pytrec_eval(metrics, keys) -> None:
    qrels, run = {"q": {"a": 1, "b": 2}}, {"q": {"a": 0.3, "c": 0.9}}
    ours = evaluate_run(qrels, run, metrics)
    assert set(ours["q"]) == keys
    assert ours == reference(qrels, run, metrics)


def test_repeated_cutoffs_count_once() -> None:
    # pytrec_eval aborts on these; we read both as P_5.
    assert evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, {"P.5", "P_05"}) == {"q": {"P_5": 0.2}}


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("ndcg_10", "ndcg_cut_10"),
        ("map_5", "map_cut_5"),
        ("P_0", "positive"),
        ("bpref", "supported"),
        ("P_x", "unsupported"),
    ],
)
def test_unsupported_metric_names_are_configuration_errors(name, hint) -> None:
    with pytest.raises(ConfigurationError, match=hint):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1}}, {name})


def test_bad_run_scores_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="query 'q'"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": "high", "b": 1.0}}, {"map"})


def test_average_precision_divides_by_all_relevant_documents() -> None:
    value = average_precision({"1", "3", "5", "6"}, ["1", "4", "3", "5", "7"])
    assert value == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)
    assert round(value, 4) == 0.6042


def test_recall_at_k() -> None:
    assert recall_at_k({"1", "3", "5", "6"}, ["1", "4", "3", "5", "7"], 5) == 0.75
    assert recall_at_k({"1", "3", "5", "6"}, ["1", "4", "3", "5", "7"], 2) == 0.25
    assert recall_at_k({"1"}, ["2", "2", "1"], 2) == 1.0  # a repeated id keeps its first rank
    assert recall_at_k({"1", "2"}, ["2"], None) == 0.5
    with pytest.raises(ValueError, match="undefined"):
        recall_at_k(set(), ["1"], 5)
    with pytest.raises(ValueError, match="positive"):
        recall_at_k({"1"}, ["1"], 0)
