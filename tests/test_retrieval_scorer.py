"""Retrieval step documents, and the retrieval keys of a question against its reference step."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_graphrag_eval import compute_aggregates, corpus_from_data, run_evaluation
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.evaluation import make_context
from pytest_graphrag_eval.retrieval import (
    RetrievalScorer,
    parse_relevance,
    parse_retrieved_documents,
    parse_retrieved_ids,
)
from pytest_graphrag_eval.scoring import ScoringContext


def test_retrieved_ids_in_rank_order_from_text_or_list() -> None:
    output = json.dumps([{"id": "b", "text": "B"}, {"id": 7}, "c", {"id": "b"}])
    assert parse_retrieved_ids(output) == ["b", "7", "c"]
    assert parse_retrieved_ids([{"id": "x"}]) == ["x"]
    assert parse_retrieved_ids("[]") == []


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("not json", "not valid JSON"),
        ('{"id": "a"}', "must be a JSON list"),
        ("[{}]", "document #1 has no 'id'"),
        ('[{"id": ""}]', "non-empty"),
        ('[{"id": true}]', "'id' must be"),
        ('["a", {"id": "b", "text": 3}]', "document #2: 'text' must be text"),
        ('[{"id": "a", "relevance": "high"}]', "'relevance' must be an integer"),
        ("[[1]]", "document #1 must be an object"),
        (None, "got NoneType"),
    ],
)
def test_bad_retrieval_output_is_a_clear_value_error(output, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_retrieved_ids(output)


def test_documents_for_erag_need_text() -> None:
    documents = parse_retrieved_documents('[{"id": "a", "text": "A"}, {"id": "a", "text": "again"}]')
    assert [(d.id, d.text) for d in documents] == [("a", "A")]
    with pytest.raises(ValueError, match=r"document #2 \(id 'b'\) has no 'text'"):
        parse_retrieved_documents('[{"id": "a", "text": "A"}, {"id": "b"}]')


def test_relevance_defaults_to_one_and_must_agree() -> None:
    assert parse_relevance([{"id": "a"}, {"id": "b", "relevance": 2}, {"id": "c", "relevance": 0}]) == {
        "a": 1,
        "b": 2,
        "c": 0,
    }
    with pytest.raises(ValueError, match="listed twice"):
        parse_relevance([{"id": "a"}, {"id": "a", "relevance": 2}])


def corpus(reference_output, args=None):
    step = {"name": "retrieval", "output": reference_output}
    if args is not None:
        step["args"] = args
    return corpus_from_data(
        [
            {
                "template_id": "t",
                "questions": [
                    {
                        "id": "q1",
                        "question_text": "Which?",
                        "reference_steps": [[{"name": "other", "output": "x"}], [step]],
                    },
                    {"id": "q2", "question_text": "No retrieval", "reference_answer": "x"},
                ],
            }
        ]
    )


def response(*steps):
    return {"actual_answer": "a", "actual_steps": list(steps)}


def retrieval(ids, status="success"):
    return {"name": "retrieval", "status": status, "output": json.dumps([{"id": i} for i in ids])}


def score(corpus_, response_, **options):
    question = next(iter(corpus_.questions()))
    return asyncio.run(
        RetrievalScorer().score(question, response_, make_context("last_group", options=options))
    )


def test_keys_for_the_seed_example() -> None:
    reference = [{"id": str(i)} for i in (1, 3, 5, 6)]
    values = score(corpus(reference, {"k": 5}), response(retrieval(["1", "4", "3", "5", "7"])))
    assert values == {
        "retrieval_recall@5": 0.75,
        "retrieval_precision@5": 0.6,
        "retrieval_ndcg@5": pytest.approx(
            (1 + 1 / 2 + 1 / 2.321928094887362) / (1 + 1 / 1.584962500721156 + 1 / 2 + 1 / 2.321928094887362)
        ),
        "retrieval_ap": pytest.approx((1 + 2 / 3 + 3 / 4) / 4),
        "retrieval_mrr": 1.0,
    }


def test_graded_relevance_weighs_ndcg_only() -> None:
    reference = [{"id": "a", "relevance": 3}, {"id": "b", "relevance": 1}, {"id": "n", "relevance": 0}]
    values = score(corpus(reference), response(retrieval(["n", "b", "a"])))
    assert values["retrieval_recall@10"] == 1.0
    assert values["retrieval_precision@10"] == 0.2
    assert values["retrieval_mrr"] == 0.5
    ideal = 3 + 1 / 1.584962500721156
    assert values["retrieval_ndcg@10"] == pytest.approx((1 / 1.584962500721156 + 3 / 2) / ideal)


def test_k_from_option_when_the_step_has_none() -> None:
    values = score(corpus([{"id": "a"}]), response(retrieval(["x", "a"])), retrieval_k=1)
    assert values["retrieval_recall@1"] == 0.0 and values["retrieval_precision@1"] == 0.0
    with pytest.raises(ConfigurationError, match="retrieval_k"):
        score(corpus([{"id": "a"}]), response(), retrieval_k=0)


def test_last_successful_retrieval_step_counts() -> None:
    steps = [retrieval(["a"]), retrieval(["x"]), {"name": "retrieval", "status": "error", "error": "boom"}]
    assert score(corpus([{"id": "a"}]), response(*steps))["retrieval_recall@10"] == 0.0


def test_no_retrieval_step_retrieved_nothing() -> None:
    values = score(corpus([{"id": "a"}]), response({"name": "other", "output": "x"}))
    assert set(values.values()) == {0.0}


def test_questions_without_reference_retrieval_step_get_no_keys() -> None:
    question = list(corpus([{"id": "a"}]).questions())[1]
    assert asyncio.run(RetrievalScorer().score(question, response(retrieval(["a"])), ScoringContext())) == {}


def test_unusable_outputs_are_errors_not_scores() -> None:
    bad_actual = score(corpus([{"id": "a"}]), response({"name": "retrieval", "output": "oops"}))
    assert bad_actual == {
        "retrieval_error": "actual retrieval step: retrieval output is not valid JSON: "
        "Expecting value: line 1 column 1 (char 0)"
    }
    no_relevant = score(corpus([{"id": "a", "relevance": 0}]), response(retrieval(["a"])))
    assert "lists no relevant document" in no_relevant["retrieval_error"]


def test_keys_are_aggregated_by_the_evaluation() -> None:
    data = corpus([{"id": "a"}, {"id": "b"}], {"k": 2})
    results = run_evaluation(data, {"q1": response(retrieval(["a", "c"])), "q2": response()})
    assert results[0]["retrieval_recall@2"] == 0.5
    assert "retrieval_recall@2" not in results[1]
    assert compute_aggregates(results)["micro"]["retrieval_recall@2"]["mean"] == 0.5
