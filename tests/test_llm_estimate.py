"""Dry-run estimates: synthetic replies, purposes and the stated token ranges."""

from __future__ import annotations

import json

from pytest_graphrag_eval.answers.claims import parse_claim_counts
from pytest_graphrag_eval.answers.llm_correctness import REPLY_PROPERTIES
from pytest_graphrag_eval.answers.metric import response_format
from pytest_graphrag_eval.llm.estimate import CallPlanner, estimate_lines, purpose_of, synthetic_reply
from pytest_graphrag_eval.llm.pricing import ModelPrice


def test_synthetic_reply_is_the_smallest_valid_reply_of_the_schema() -> None:
    schema = response_format("answer_correctness", REPLY_PROPERTIES, "json_schema")
    reply = synthetic_reply(schema)
    assert json.loads(reply) == {
        "reference_claims_count": 1,
        "actual_claims_count": 1,
        "matching_claims_count": 1,
        "reason": "x",
    }
    parse_claim_counts(reply)  # the scorer accepts it, so calls after it are reached
    assert synthetic_reply({"type": "json_object"}) == "{}"
    assert purpose_of("chat", schema) == "answer_correctness" and purpose_of("chat", None) == "chat"


def test_approximate_ranges_are_stated_and_priced() -> None:
    planner = CallPlanner(max_output_tokens=100)
    messages = [
        {"role": "system", "content": "one two three four"},
        {"role": "user", "content": "five, six."},
    ]
    planner.plan_chat(messages, "no-such-tokenizer-model", None)
    call = planner.calls[0]
    assert call.input_tokens == (6, 12 + 2 * 4 + 3)  # 8 words and marks: x0.75 .. x1.5 + overhead
    assert call.output_tokens == (1, 100)
    planner.record_cached("chat", "no-such-tokenizer-model", None)
    lines = estimate_lines(planner, {"no-such-tokenizer-model": ModelPrice(1_000_000, 0)})
    assert lines[1].split() == [
        "chat",
        "no-such-tokenizer-model",
        "1",
        "1",
        "6-23",
        "1-100",
        "6.0000-23.0000",
    ]
    assert any("approximated as words and punctuation marks" in line for line in lines)
    assert any("high 100 per call" in line for line in lines)
