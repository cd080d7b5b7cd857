"""Gates on change since a baseline: grammar, normal form, and evaluation against a comparison."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pytest_graphrag_eval.errors import ConfigurationError, SourceLocation
from pytest_graphrag_eval.gates.suite_gates import evaluate_gates, gates_from_yaml, parse_gate


@dataclass(frozen=True)
class Change:
    delta: float
    ci_low: float | None
    ci_high: float | None
    n_pairs: int


class Changes:
    """A comparison reduced to what gates read; intervals widen with the confidence asked for."""

    def __init__(self, counts: dict[str, int], deltas: dict[tuple[str, str | None], float], n: int = 40):
        self.counts, self.deltas, self.n = counts, deltas, n

    def count(self, kind: str, template: str | None) -> int:
        return self.counts.get(f"{template}:{kind}" if template else kind, 0)

    def metric_change(self, metric: str, template: str | None, confidence: float | None) -> Change | None:
        if (metric, template) not in self.deltas:
            return None
        delta = self.deltas[(metric, template)]
        half = {None: 0.0, 0.9: 0.02, 0.95: 0.03, 0.99: 0.05}[confidence]
        return Change(delta, delta - half, delta + half, self.n)

    def template_ids(self) -> list[str]:
        return sorted({template for _, template in self.deltas if template})


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("delta:answer_f1.mean>=-0.02", "delta:micro:answer_f1.mean>=-0.02"),
        ("delta: answer_f1.mean >= -0.02 @ 95", "delta:micro:answer_f1.mean>=-0.02@95"),
        ("delta:template[t1]:steps_score.mean>=0@99", "delta:template[t1]:steps_score.mean>=0@99"),
        ("delta:retrieval_recall@10.mean>=-0.05@90", "delta:micro:retrieval_recall@10.mean>=-0.05@90"),
        ("delta:elapsed_sec.mean<=0.5@95", "delta:micro:elapsed_sec.mean<=0.5@95"),
        ("regressions<=0", "micro:regressions<=0"),
        ("template[*]:regressions<=1", "template[*]:regressions<=1"),
        ("edited==0", "micro:edited==0"),
    ],
)
def test_change_gates_parse_to_a_normal_form_that_parses_back(text: str, expression: str) -> None:
    gate = parse_gate(text)
    assert gate.needs_baseline
    assert gate.expression == expression
    assert parse_gate(gate.expression) == gate


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("delta:answer_f1.median>=0", "paired change of a mean"),
        ("delta:answer_f1>=0", "paired change of a mean"),
        ("delta:macro:answer_f1.mean>=0", "not macro"),
        ("delta:answer_f1.mean>-0.02@95", "takes >= or <="),
        ("delta:answer_f1.mean>=-0.02@101", "percentage"),
        ("delta:answer_f1.mean>=-0.02@5", "percentage"),
        ("answer_f1.mean>=0.8@95", "delta: gates only"),
        ("delta:regressions<=0", "already a change"),
    ],
)
def test_malformed_change_gates_say_why(text: str, reason: str) -> None:
    with pytest.raises(ConfigurationError, match="--graphrag-gate") as raised:
        parse_gate(text)
    assert reason in str(raised.value)


def test_corpus_file_change_gates_in_mapping_form() -> None:
    gates = gates_from_yaml(
        {"regressions": "<=0", "delta:answer_f1.mean": ">=-0.1"}, SourceLocation(file="c.yaml")
    )
    assert [gate.expression for gate in gates] == ["micro:regressions<=0", "delta:micro:answer_f1.mean>=-0.1"]


def test_count_gates_read_the_comparison() -> None:
    changes = Changes(
        {"regressions": 2, "t1:regressions": 2}, {("answer_f1", "t1"): 0.0, ("answer_f1", "t2"): 0.0}
    )
    results = evaluate_gates(
        [parse_gate("regressions<=0"), parse_gate("template[*]:regressions<=0")], {}, changes
    )
    assert [(r.expression, r.actual, r.passed) for r in results] == [
        ("micro:regressions<=0", 2.0, False),
        ("template[t1]:regressions<=0", 2.0, False),
        ("template[t2]:regressions<=0", 0.0, True),
    ]
    assert results[0].message == "micro:regressions = 2, required <= 0, cli gate"


def test_a_point_delta_gate_compares_the_change_itself() -> None:
    changes = Changes({}, {("answer_f1", None): -0.03})
    [result] = evaluate_gates([parse_gate("delta:answer_f1.mean>=-0.02")], {}, changes)
    assert (result.actual, result.passed) == (-0.03, False)


@pytest.mark.parametrize(
    ("delta", "gate", "passed"),
    [
        (-0.03, "delta:answer_f1.mean>=-0.02@95", True),  # interval [-0.06, 0.00] reaches -0.02
        (-0.06, "delta:answer_f1.mean>=-0.02@95", False),  # interval [-0.09, -0.03] entirely below
        (-0.06, "delta:answer_f1.mean>=-0.02@99", True),  # wider: [-0.11, -0.01] reaches it
        (0.04, "delta:answer_f1.mean<=0@90", False),  # [0.02, 0.06] entirely above 0
        (0.01, "delta:answer_f1.mean<=0@90", True),
    ],
)
def test_a_confidence_gate_fails_only_when_the_whole_interval_is_on_the_wrong_side(
    delta: float, gate: str, passed: bool
) -> None:
    [result] = evaluate_gates([parse_gate(gate)], {}, Changes({}, {("answer_f1", None): delta}))
    assert result.passed is passed
    assert "interval [" in result.message


def test_change_gates_without_a_baseline_fail_and_name_the_option() -> None:
    [result] = evaluate_gates([parse_gate("regressions<=0")], {}, None)
    assert not result.passed
    assert "--graphrag-baseline" in result.message


def test_a_metric_missing_from_both_runs_fails_the_gate() -> None:
    [result] = evaluate_gates([parse_gate("delta:answer_f1.mean>=0@95")], {}, Changes({}, {}))
    assert not result.passed
    assert "not computed" in result.message


def test_too_few_pairs_for_an_interval_fail_the_confidence_gate() -> None:
    class NoInterval(Changes):
        def metric_change(self, metric: str, template: str | None, confidence: float | None) -> Change | None:
            return Change(-0.5, None, None, 1)

    [result] = evaluate_gates([parse_gate("delta:answer_f1.mean>=0@95")], {}, NoInterval({}, {}))
    assert not result.passed
    assert "too few" in result.message
