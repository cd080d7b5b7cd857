"""Suite-level gates: grammar, sources, and evaluation against real compute_aggregates() output."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.aggregates import STAT_NAMES, compute_aggregates
from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.errors import ConfigurationError, CorpusError, SourceLocation
from pytest_graphrag_eval.gates.corpus_rules import corpus_rules
from pytest_graphrag_eval.gates.expressions import METRIC_NAME, OPERATORS
from pytest_graphrag_eval.gates.suite_gates import (
    GATE_SOURCES,
    Gate,
    combine_gates,
    evaluate_gates,
    gates_from_yaml,
    parse_gate,
    parse_gate_list,
)

# --- parsing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "gate"),
    [
        ("steps_score.mean>=0.9", Gate("micro", "steps_score", "mean", ">=", 0.9)),
        ("micro:answer_f1.median>=0.7", Gate("micro", "answer_f1", "median", ">=", 0.7)),
        (" macro : steps_score . mean >= 0.85 ", Gate("macro", "steps_score", "mean", ">=", 0.85)),
        (
            "template[list_all_transformers]:steps_score.min>=1",
            Gate("template", "steps_score", "min", ">=", 1.0, "list_all_transformers"),
        ),
        ("template [ * ] : steps_score.mean>=0.8", Gate("template", "steps_score", "mean", ">=", 0.8, "*")),
        ("template[a:b c]:elapsed_sec.max<30", Gate("template", "elapsed_sec", "max", "<", 30.0, "a:b c")),
        ("number_of_error_samples<=0", Gate("micro", "number_of_error_samples", None, "<=", 0.0)),
        (
            "template[t]:number_of_success_samples>=3",
            Gate("template", "number_of_success_samples", None, ">=", 3.0, "t"),
        ),
        ("error_rate<=5e-2", Gate("micro", "error_rate", None, "<=", 0.05)),
        ("retrieval_recall@10.sum>1", Gate("micro", "retrieval_recall@10", "sum", ">", 1.0)),
        ("erag_P_10.mean==1", Gate("micro", "erag_P_10", "mean", "==", 1.0)),
        ("template_score.max>=1", Gate("micro", "template_score", "max", ">=", 1.0)),
    ],
)
def test_parse_valid(text: str, gate: Gate) -> None:
    assert parse_gate(text) == gate


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("steps_score>=0.9", "a metric gate needs a statistic, e.g. steps_score.mean"),
        ("steps_score.avg>=0.9", "unknown statistic 'avg'"),
        ("macro:steps_score.median>=0.9", "macro aggregates have only means"),
        ("macro:number_of_error_samples<=0", "number_of_error_samples is not in the macro aggregates"),
        ("macro:error_rate<=0.1", "error_rate is not in the macro aggregates"),
        ("number_of_error_samples.sum<=0", "number_of_error_samples is a count and takes no statistic"),
        ("mikro:steps_score.mean>=0.9", "unknown scope 'mikro'"),
        ("template:steps_score.mean>=0.9", "the template scope needs an id"),
        ("template[]:steps_score.mean>=0.9", "empty template id"),
        ("template[t:steps_score.mean>=0.9", "without a closing ']'"),
        ("template[t] steps_score.mean>=0.9", "expected ':' after 'template[t]'"),
        ("steps_score.mean=>0.9", "unknown operator '=>'"),
        ("steps_score.mean>=", "no number after the operator"),
        ("steps score.mean>=1", "'steps score' is not a metric name"),
        (".mean>=1", "'' is not a metric name"),
        ("steps_score.mean", "no comparison operator"),
    ],
)
@pytest.mark.parametrize("source", ["cli", "ini"])
def test_parse_invalid_names_option_and_text(text: str, reason: str, source: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_gate(text, source)
    message = str(info.value)
    assert message.startswith("--graphrag-gate: " if source == "cli" else "ini option graphrag_gates: ")
    assert repr(text) in message
    assert reason in message


template_ids = st.text(
    alphabet=st.characters(blacklist_characters="]", blacklist_categories=("Cs",)), min_size=1
).filter(lambda text: text == text.strip())


@st.composite
def gates(draw: st.DrawFn) -> Gate:
    scope = draw(st.sampled_from(["micro", "macro", "template"]))
    template = draw(template_ids) if scope == "template" else None
    if scope != "macro" and draw(st.booleans()):
        metric = draw(st.sampled_from(["number_of_error_samples", "number_of_success_samples", "error_rate"]))
        stat = None
    else:
        metric = draw(st.from_regex(METRIC_NAME, fullmatch=True))
        stat = "mean" if scope == "macro" else draw(st.sampled_from(STAT_NAMES))
    op = draw(st.sampled_from(sorted(OPERATORS)))
    limit = draw(st.floats(allow_nan=False, allow_infinity=False))
    return Gate(scope, metric, stat, op, limit, template, draw(st.sampled_from(GATE_SOURCES)))


@given(gates())
def test_format_then_parse_roundtrips(gate: Gate) -> None:
    parsed = parse_gate(gate.expression, gate.source)
    assert parsed == gate
    assert parsed.source == gate.source


def test_expression_makes_default_scope_explicit() -> None:
    assert parse_gate("steps_score.mean>=0.90").expression == "micro:steps_score.mean>=0.9"
    assert str(parse_gate("number_of_error_samples<=0")) == "micro:number_of_error_samples<=0"


# --- sources ------------------------------------------------------------------


def test_resolve_combines_sources_and_drops_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "corpus.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            gates:
              - micro:steps_score.mean >= 0.9
              - template[*]:steps_score.min>=0.5
            templates:
              - template_id: t
                questions: [{id: q, question_text: "Q?"}]
            """
        ),
        encoding="utf-8",
    )
    resolved = combine_gates(
        [
            *parse_gate_list(["steps_score.mean>=0.9", "error_rate<=0.1"], "ini"),
            *parse_gate_list(["number_of_error_samples<=0", "error_rate<=0.1"], "cli"),
            *corpus_rules(load_corpus(path)).gates,
        ]
    )
    assert [(gate.expression, gate.source) for gate in resolved] == [
        ("micro:steps_score.mean>=0.9", "ini"),
        ("micro:error_rate<=0.1", "ini"),
        ("micro:number_of_error_samples<=0", "cli"),
        ("template[*]:steps_score.min>=0.5", "corpus"),
    ]
    assert combine_gates([*parse_gate_list(None, "ini"), *parse_gate_list(None, "cli")]) == []


def test_yaml_mapping_and_single_string() -> None:
    where = SourceLocation("corpus.yaml")
    assert gates_from_yaml({"steps_score.mean": 0.9, "template[t]:elapsed_sec.max": "<= 30"}, where) == [
        Gate("micro", "steps_score", "mean", ">=", 0.9),
        Gate("template", "elapsed_sec", "max", "<=", 30.0, "t"),
    ]
    assert gates_from_yaml("error_rate<=0", where) == [Gate("micro", "error_rate", None, "<=", 0.0)]
    assert all(gate.source == "corpus" for gate in gates_from_yaml(["steps_score.min>=1"], where))


@pytest.mark.parametrize(
    ("value", "field", "reason"),
    [
        (["steps_score.mean>=0.9", "steps_score>=0.9"], "gates[1]", "needs a statistic"),
        ({"macro:steps_score.max": 1}, "gates.macro:steps_score.max", "macro aggregates have only means"),
        ({"steps_score.mean": None}, "gates.steps_score.mean", "expected a number"),
        ([3], "gates[0]", "expected text, got int"),
        (True, "gates", "must be a list of gates"),
    ],
)
def test_yaml_errors_name_file_and_field(value: object, field: str, reason: str) -> None:
    with pytest.raises(CorpusError) as info:
        gates_from_yaml(value, SourceLocation("suite.yaml"))
    assert info.value.field == field
    assert str(info.value).startswith(f"suite.yaml, field {field!r}: ")
    assert reason in str(info.value)


def test_parse_gate_list_keeps_order() -> None:
    texts = ["steps_score.mean>=0.9", "error_rate<=0", "macro:answer_f1.mean>=0.5"]
    assert [gate.source for gate in parse_gate_list(texts, "ini")] == ["ini"] * 3
    assert [gate.metric for gate in parse_gate_list(texts, "ini")] == [
        "steps_score",
        "error_rate",
        "answer_f1",
    ]


# --- evaluation against compute_aggregates() ---------------------------------------


def success(template_id: str, question_id: str, **metrics: float) -> dict[str, Any]:
    return {"template_id": template_id, "question_id": question_id, "status": "success", **metrics}


def error(template_id: str, question_id: str) -> dict[str, Any]:
    return {
        "template_id": template_id,
        "question_id": question_id,
        "status": "error",
        "error": "agent crashed",
    }


RESULTS = [
    success("t_a", "a1", steps_score=1.0, answer_f1=0.8, elapsed_sec=2.0),
    success("t_a", "a2", steps_score=0.5, elapsed_sec=4.0),
    error("t_a", "a3"),
    success("t_b", "b1", steps_score=1.0, elapsed_sec=1.0),
    success("t_b", "b2", steps_score=0.75, elapsed_sec=1.0),
    success("t_b", "b3", steps_score=0.5, elapsed_sec=1.0),
    error("t_c", "c1"),
]
# steps_score: t_a [1, 0.5] mean 0.75; t_b [1, 0.75, 0.5] mean 0.75; micro [1, .5, 1, .75, .5]
# micro mean 0.75, median 0.75, sum 3.75, min 0.5; macro mean 0.75. elapsed micro sum 9.


def evaluate(*texts: str, results: list[dict[str, Any]] = RESULTS) -> list[dict[str, Any]]:
    return [
        outcome.record().to_json()
        for outcome in evaluate_gates(parse_gate_list(texts, "cli"), compute_aggregates(results))
    ]


@pytest.mark.parametrize(
    ("text", "actual", "passed"),
    [
        ("steps_score.mean>=0.75", 0.75, True),
        ("micro:steps_score.mean>0.75", 0.75, False),
        ("micro:steps_score.median==0.75", 0.75, True),
        ("steps_score.sum>=3.75", 3.75, True),
        ("steps_score.min>=0.6", 0.5, False),
        ("elapsed_sec.max<=4", 4.0, True),
        ("elapsed_sec.sum<9", 9.0, False),
        ("macro:steps_score.mean>=0.75", 0.75, True),
        ("macro:elapsed_sec.mean<=2", 2.0, True),
        ("template[t_a]:elapsed_sec.mean<=2", 3.0, False),
        ("template[t_b]:steps_score.max==1", 1.0, True),
        ("number_of_error_samples<=0", 2.0, False),
        ("number_of_success_samples>=5", 5.0, True),
        ("template[t_b]:number_of_error_samples<=0", 0.0, True),
        ("error_rate<=0.3", 2 / 7, True),
        ("template[t_a]:error_rate<0.3", 1 / 3, False),
        ("answer_f1.mean>=0.8", 0.8, True),
    ],
)
def test_every_gate_form(text: str, actual: float, passed: bool) -> None:
    (outcome,) = evaluate(text)
    assert outcome["actual"] == pytest.approx(actual)
    assert outcome["passed"] is passed


def test_messages_for_pass_and_fail() -> None:
    passed, failed = evaluate("steps_score.mean>=0.7", "template[t_a]:elapsed_sec.max<4")
    assert passed["message"] == "micro:steps_score.mean = 0.75 >= 0.7 (cli gate)"
    assert failed["message"] == "template[t_a]:elapsed_sec.max = 4, required < 4, cli gate"


def test_template_wildcard_expands_in_sorted_order() -> None:
    outcomes = evaluate("template[*]:steps_score.mean>=0.7", "number_of_error_samples<=5")
    assert [(o["expression"], o["gate"], o["passed"]) for o in outcomes] == [
        ("template[t_a]:steps_score.mean>=0.7", "template[*]:steps_score.mean>=0.7", True),
        ("template[t_b]:steps_score.mean>=0.7", "template[*]:steps_score.mean>=0.7", True),
        ("template[t_c]:steps_score.mean>=0.7", "template[*]:steps_score.mean>=0.7", False),
        ("micro:number_of_error_samples<=5", "micro:number_of_error_samples<=5", True),
    ]
    assert outcomes[2]["message"] == (
        "template[t_c]:steps_score.mean was not computed: no question succeeded (required >= 0.7, cli gate)"
    )


def test_wildcard_with_no_templates_fails() -> None:
    (outcome,) = evaluate("template[*]:steps_score.mean>=0.7", results=[])
    assert outcome["passed"] is False
    assert outcome["actual"] is None
    assert outcome["message"] == (
        "template[*]:steps_score.mean was not computed: no template has results in this run "
        "(required >= 0.7, cli gate)"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "template[t_d]:steps_score.mean>=0.5",
            "template[t_d]:steps_score.mean was not computed: template 't_d' has no results in this run; "
            "templates with results: 't_a', 't_b', 't_c' (required >= 0.5, cli gate)",
        ),
        (
            "answer_relevance.mean>=0.5",
            "micro:answer_relevance.mean was not computed: answer metrics need a reference_answer",
        ),
        (
            "macro:retrieval_recall@10.mean>=0.5",
            "macro:retrieval_recall@10.mean was not computed: "
            "retrieval metrics need a reference step named retrieval",
        ),
        (
            "template[t_b]:answer_f1.mean>=0.5",
            "template[t_b]:answer_f1.mean was not computed: answer metrics need",
        ),
        (
            "steps_scor.mean>=0.5",
            "no scorer produced this key; check the metric name; did you mean 'steps_score'?",
        ),
        ("template[t_c]:error_rate<=0.5", None),
    ],
)
def test_missing_values_fail_with_reason(text: str, message: str | None) -> None:
    (outcome,) = evaluate(text)
    if message is None:  # t_c: every question failed, so error_rate is 1, not missing
        assert (outcome["passed"], outcome["actual"]) == (False, 1.0)
        return
    assert outcome["passed"] is False
    assert outcome["actual"] is None
    assert message in outcome["message"]
    assert outcome["message"].endswith("(required >= 0.5, cli gate)")


def test_error_rate_without_samples_fails() -> None:
    (outcome,) = evaluate("error_rate<=0.5", results=[])
    assert (outcome["passed"], outcome["actual"]) == (False, None)
    assert "no questions ran" in outcome["message"]


def test_results_are_deterministic_and_json_serialisable() -> None:
    texts = ("template[*]:steps_score.mean>=0.7", "macro:steps_score.mean>=0.7", "error_rate<=0.1")
    first = json.dumps(evaluate(*texts))
    for seed in range(5):
        shuffled = list(RESULTS)
        random.Random(seed).shuffle(shuffled)
        assert json.dumps(evaluate(*texts, results=shuffled)) == first
    assert json.dumps(evaluate(*texts, results=RESULTS[::-1])) == first
    assert json.loads(first)[0] == {
        "expression": "template[t_a]:steps_score.mean>=0.7",
        "gate": "template[*]:steps_score.mean>=0.7",
        "passed": True,
        "actual": 0.75,
        "scope": "template",
        "template": "t_a",
        "metric": "steps_score",
        "stat": "mean",
        "op": ">=",
        "limit": 0.7,
        "change": None,
        "confidence": None,
        "source": "cli",
        "message": "template[t_a]:steps_score.mean = 0.75 >= 0.7 (cli gate)",
    }


def test_gate_on_a_metric_every_scorer_failed_quotes_the_error_of_its_own_scope() -> None:
    judged = [
        {"template_id": "t_a", "question_id": "a1", "status": "success", "answer_eval_error": "reply <1>"},
        {"template_id": "t_a", "question_id": "a2", "status": "success", "answer_eval_error": "x" * 300},
        {"template_id": "t_b", "question_id": "b1", "status": "success", "answer_f1_error": "no reply"},
    ]
    gates = parse_gate_list(["answer_f1.mean>=0.5", "template[t_a]:answer_f1.mean>=0.5"], "cli")
    micro, template = evaluate_gates(gates, compute_aggregates(judged), None, judged)
    assert not micro.passed and not template.passed
    assert (
        "3 of 3 answered questions have an error for it, the first answer_eval_error: 'reply <1>'"
        in micro.message
    )
    assert "2 of 2 answered questions have an error for it, the first answer_eval_error" in template.message
    # An agent error is the question's own failure: the gate does not quote it as a scorer's.
    failed = [{"template_id": "t_a", "question_id": "a1", "status": "error", "error": "agent timed out"}]
    [unanswered] = evaluate_gates(
        gates[:1], compute_aggregates([*failed, judged[2]]), None, [*failed, judged[2]]
    )
    assert "1 of 1 answered questions have an error for it, the first answer_f1_error" in unanswered.message
    # Without results the gate still fails, with the usual hint.
    [alone] = evaluate_gates(gates[:1], compute_aggregates(judged))
    assert not alone.passed and "answer judge" in alone.message
