"""The agreement statistics against hand-computed values and independent formulas; the judge gates."""

from __future__ import annotations

import itertools
import random
from dataclasses import asdict

import pytest

from pytest_graphrag_eval.errors import ConfigurationError, SourceLocation
from pytest_graphrag_eval.gates.suite_gates import evaluate_gates, gates_from_yaml, parse_gate
from pytest_graphrag_eval.judging.agreement import binary_agreement, krippendorff_alpha, score_agreement


def pairs(both_pass: int, both_fail: int, pass_fail: int, fail_pass: int) -> list[tuple[bool, bool]]:
    return (
        [(True, True)] * both_pass
        + [(False, False)] * both_fail
        + [(True, False)] * pass_fail
        + [(False, True)] * fail_pass
    )


def test_kappa_of_a_hand_computed_table() -> None:
    # po = 0.7; person passes 6 of 10, judge 5 of 10: pe = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = 0.2/0.5.
    agreement = binary_agreement(pairs(4, 3, 2, 1))
    assert agreement.accuracy == pytest.approx(0.7)
    assert agreement.kappa == pytest.approx(0.4)
    assert asdict(agreement.confusion) == {
        "both_pass": 4,
        "both_fail": 3,
        "person_pass_judge_fail": 2,
        "person_fail_judge_pass": 1,
    }


def test_kappa_interval_follows_the_published_variance_on_the_smoothed_table() -> None:
    # Fleiss, Cohen and Everitt's variance written out for two categories, term by term, on the table
    # with half a count added to each cell; the interval is kappa plus and minus 1.96 of its root.
    counts = (40, 20, 10, 30)
    agreement = binary_agreement(pairs(40, 30, 20, 10))
    n = sum(counts)
    p11, p12, p21, p22 = ((count + 0.5) / (n + 2) for count in counts)
    r1, r2, c1, c2 = p11 + p12, p21 + p22, p11 + p21, p12 + p22
    pe = r1 * c1 + r2 * c2
    smoothed = (p11 + p22 - pe) / (1 - pe)
    a = p11 * (1 - (r1 + c1) * (1 - smoothed)) ** 2 + p22 * (1 - (r2 + c2) * (1 - smoothed)) ** 2
    b = (1 - smoothed) ** 2 * (p12 * (c1 + r2) ** 2 + p21 * (c2 + r1) ** 2)
    c = (smoothed - pe * (1 - smoothed)) ** 2
    se = ((a + b - c) / (n * (1 - pe) ** 2)) ** 0.5
    kappa = (0.7 - 0.5) / (1 - 0.5)  # po 0.7; person passes 60 of 100, judge 50 of 100
    assert agreement.kappa == pytest.approx(kappa)
    assert agreement.interval is not None
    assert agreement.interval.low == pytest.approx(kappa - 1.959963984540054 * se)
    assert agreement.interval.high == pytest.approx(kappa + 1.959963984540054 * se)


def test_a_sample_in_full_agreement_still_has_an_interval_below_one() -> None:
    interval = binary_agreement(pairs(30, 20, 0, 0)).interval
    assert interval is not None and 0.85 < interval.low < 1 == interval.high


def test_kappa_is_undefined_when_both_sides_give_one_verdict() -> None:
    agreement = binary_agreement(pairs(10, 0, 0, 0))
    assert agreement.kappa is None and agreement.accuracy == 1.0
    assert "label answers of both kinds" in (agreement.undefined or "")


def brute_force_alpha(values: list[tuple[float, float]]) -> float:
    """Krippendorff's alpha from its pairable-values definition, every ordered pair counted."""
    pooled = [value for pair in values for value in pair]
    n = len(pooled)
    within = sum((a - b) ** 2 + (b - a) ** 2 for a, b in values) / n  # m_u - 1 = 1 for two coders
    between = sum((x - y) ** 2 for x, y in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return 1 - within / between


def test_alpha_equals_its_definition_on_random_scores() -> None:
    rng = random.Random(3)
    values = [(rng.random(), rng.random()) for _ in range(25)]
    assert krippendorff_alpha(values) == pytest.approx(brute_force_alpha(values))
    agreement = score_agreement(values)
    assert (
        agreement.interval is not None
        and agreement.interval.low <= agreement.alpha <= agreement.interval.high
    )  # type: ignore[operator]


def test_alpha_is_one_for_identical_scores_and_undefined_without_variation() -> None:
    assert krippendorff_alpha([(0.2, 0.2), (0.9, 0.9), (0.5, 0.5)]) == pytest.approx(1.0)
    assert score_agreement([(0.5, 0.5), (0.5, 0.5)]).alpha is None


def test_judge_gates_parse_in_every_form_and_fail_without_a_calibration() -> None:
    gate = parse_gate("judge: answer_correctness.kappa_low >= 0.4")
    assert gate.expression == "judge:answer_correctness.kappa_low>=0.4"
    assert parse_gate(gate.expression) == gate
    assert gates_from_yaml({"judge:answer_correctness.kappa_low": 0.4}, SourceLocation("c.yaml")) == [gate]
    with pytest.raises(ConfigurationError, match="STAT one of kappa, kappa_low"):
        parse_gate("judge:answer_correctness.mean>=0.4")
    (missing,) = evaluate_gates([gate], {"micro": {}})
    assert not missing.passed and "pass --graphrag-judge-labels FILE" in missing.message
    section = {"metrics": {"answer_correctness": {"judged": 50, "kappa_interval": {"low": 0.45}}}}
    (held,) = evaluate_gates([gate], {"micro": {}}, calibration=section)
    assert held.passed and held.actual == 0.45
    (unknown,) = evaluate_gates([parse_gate("judge:tone.labels>=50")], {"micro": {}}, calibration=section)
    assert not unknown.passed and "no labels of tone were calibrated" in unknown.message
