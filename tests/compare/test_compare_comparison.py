from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compare_support import report, result, same_change
from comparison_support import compare_reports
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.errors import ConfigurationError, InputError
from pytest_graphrag_eval.report_model import Classification, MetricChange

METRIC_KEYS = {
    "baseline",
    "current",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "n_pairs",
    "test",
    "min_detectable_delta",
}


@pytest.fixture
def runs() -> tuple[dict, list[dict]]:
    """q1 regressed, q2 fixed, q3 unchanged, q4 edited, q5 removed, q6 new; two templates."""
    baseline = report(
        [
            result("q1", "passed", steps_score=1.0, answer_f1=0.9, elapsed_sec=1.0),
            result("q2", "failed", steps_score=0.0, answer_f1=0.2, elapsed_sec=1.5),
            result("q3", "passed", template_id="t2", steps_score=1.0, answer_f1=1.0, elapsed_sec=2.0),
            result("q4", "passed", template_id="t2", steps_score=1.0, answer_f1=1.0),
            result("q5", "passed", steps_score=1.0, answer_f1=1.0),
        ]
    )
    current = [
        result("q6", "passed", steps_score=1.0, answer_f1=1.0),
        result("q1", "failed", steps_score=0.0, answer_f1=0.4, elapsed_sec=0.5, nodeid="c.yaml::t1::q1"),
        result("q2", "passed", steps_score=1.0, answer_f1=0.8, elapsed_sec=1.5),
        result("q3", "passed", template_id="t2", steps_score=1.0, answer_f1=0.9, elapsed_sec=2.5),
        result("q4", "failed", template_id="t2", question_text="Reworded?", steps_score=0.0, answer_f1=0.0),
    ]
    return baseline, current


def test_classification_lists(runs: tuple[dict, list[dict]]) -> None:
    section = compare_reports(*runs, baseline_path="reports/main.json").to_json()
    assert section["regressions"] == ["q1"]
    assert section["fixed"] == ["q2"]
    assert section["unchanged"] == ["q3"]
    assert section["edited"] == ["q4"]
    assert section["removed"] == ["q5"]
    assert section["new"] == ["q6"]
    assert [q["question_id"] for q in section["questions"]] == ["q6", "q1", "q2", "q3", "q4", "q5"]
    assert section["baseline"] == {
        "path": "reports/main.json",
        "started_at": "2026-11-01T10:00:00Z",
        "questions": 5,
    }
    assert (section["confidence"], section["resamples"], section["seed"]) == (0.95, 2000, 0)


def test_question_entries(runs: tuple[dict, list[dict]]) -> None:
    questions = {q["question_id"]: q for q in compare_reports(*runs).to_json()["questions"]}
    q1 = questions["q1"]
    assert q1["classification"] == "regressed"
    assert (q1["baseline_outcome"], q1["current_outcome"]) == ("passed", "failed")
    assert q1["nodeid"] == "c.yaml::t1::q1"
    assert q1["deltas"]["steps_score"] == {"baseline": 1.0, "current": 0.0, "delta": -1.0}
    assert q1["deltas"]["answer_f1"]["delta"] == pytest.approx(-0.5)
    assert "nodeid" not in questions["q2"]
    assert questions["q6"]["deltas"] == {} and questions["q5"]["deltas"] == {}
    assert questions["q5"]["current_outcome"] is None


def test_edited_new_and_removed_stay_out_of_statistics(runs: tuple[dict, list[dict]]) -> None:
    section = compare_reports(*runs).to_json()
    f1 = section["metrics"]["answer_f1"]
    assert set(f1) == METRIC_KEYS
    assert f1["n_pairs"] == 3
    assert f1["baseline"] == pytest.approx((0.9 + 0.2 + 1.0) / 3)
    assert f1["current"] == pytest.approx((0.4 + 0.8 + 0.9) / 3)
    assert f1["delta"] == pytest.approx(f1["current"] - f1["baseline"])
    assert f1["test"] == "bootstrap"
    assert section["metrics"]["steps_score"]["test"] == "mcnemar"
    assert section["metrics"]["elapsed_sec"]["n_pairs"] == 3
    outcomes = section["outcomes"]
    assert outcomes["n_pairs"] == 3 and outcomes["test"] == "mcnemar"
    assert (outcomes["baseline_pass_rate"], outcomes["current_pass_rate"]) == (pytest.approx(2 / 3),) * 2
    assert outcomes["delta"] == 0.0 and outcomes["p_value"] == 1.0


def test_per_template_scopes(runs: tuple[dict, list[dict]]) -> None:
    section = compare_reports(*runs).to_json()
    assert set(section["per_template"]) == {"t1", "t2"}
    assert section["per_template"]["t1"]["answer_f1"]["n_pairs"] == 2
    t2 = section["per_template"]["t2"]["answer_f1"]
    assert t2["n_pairs"] == 1 and t2["delta"] == pytest.approx(-0.1) and t2["ci_low"] is None


def test_section_is_json_serialisable(runs: tuple[dict, list[dict]]) -> None:
    section = compare_reports(*runs).to_json()
    assert json.loads(json.dumps(section, allow_nan=False)) == section


def noisy_runs(n: int = 40) -> tuple[dict, list[dict]]:
    baseline = report(
        [result(f"q{i}", answer_f1=(i % 7) / 7, steps_score=float(i % 3 != 0)) for i in range(n)]
    )
    current = [
        result(f"q{i}", answer_f1=((i * 3) % 7) / 7 - 0.05 * (i % 2), steps_score=float(i % 4 != 0))
        for i in range(n)
    ]
    return baseline, current


def bounds(change: MetricChange) -> tuple[float, float]:
    assert change.ci_low is not None and change.ci_high is not None
    return change.ci_low, change.ci_high


def test_change_at_another_confidence_is_deterministic_and_nested() -> None:
    comparison = compare_reports(*noisy_runs(), resamples=500, seed=7)
    stored = comparison.change("answer_f1")
    assert comparison.change("answer_f1", confidence=0.95) == stored
    wide = comparison.change("answer_f1", confidence=0.99)
    narrow = comparison.change("answer_f1", confidence=0.8)
    assert comparison.change("answer_f1", confidence=0.99) == wide
    lows = [bounds(change)[0] for change in (wide, stored, narrow)]
    highs = [bounds(change)[1] for change in (narrow, stored, wide)]
    assert lows == sorted(lows) and highs == sorted(highs) and lows[-1] <= highs[0]
    assert wide.delta == stored.delta == narrow.delta
    again = compare_reports(*noisy_runs(), resamples=500, seed=7, confidence=0.8)
    assert same_change(again.change("answer_f1"), narrow)
    binary = comparison.change("steps_score", template="t1", confidence=0.99)
    assert binary.test == "mcnemar"
    assert bounds(binary)[0] <= bounds(comparison.change("steps_score", template="t1"))[0]
    assert comparison.outcomes.n_pairs == 40


def test_seed_changes_only_bootstrap_noise() -> None:
    one = compare_reports(*noisy_runs(), resamples=500, seed=1).change("answer_f1")
    two = compare_reports(*noisy_runs(), resamples=500, seed=2).change("answer_f1")
    assert one.delta == two.delta
    assert one.ci_low == pytest.approx(two.ci_low, abs=0.05)


def test_unknown_metric_or_scope() -> None:
    comparison = compare_reports(*noisy_runs(), resamples=200)
    with pytest.raises(KeyError, match="no paired values of 'nothing'"):
        comparison.change("nothing")
    with pytest.raises(KeyError, match="template 'nope'"):
        comparison.change("answer_f1", template="nope")


@pytest.mark.parametrize("confidence", [0.0, 1.0, 95, "0.95"])
def test_bad_confidence(confidence: object) -> None:
    with pytest.raises(ConfigurationError, match="confidence level"):
        compare_reports(*noisy_runs(), confidence=confidence)  # type: ignore[arg-type]


def test_bad_resamples_and_baseline() -> None:
    with pytest.raises(ConfigurationError, match="resamples"):
        compare_reports(*noisy_runs(), resamples=10)
    with pytest.raises(InputError, match="regenerate"):
        compare_reports({"format_version": 1, "results": []}, [], baseline_path="old.json")


def test_classification_enum_values_match_the_schema() -> None:
    assert [str(c) for c in Classification] == [
        "regressed",
        "fixed",
        "unchanged",
        "new",
        "removed",
        "edited",
        "not_evaluated",
    ]


def test_skipped_and_xfailed_are_not_paired_for_pass_fail() -> None:
    baseline = report([result("q1", "skipped"), result("q2", "passed"), result("q3", "xfailed")])
    current = [result("q1", "failed"), result("q2", "failed"), result("q3", "passed")]
    section = compare_reports(baseline, current).to_json()
    assert section["regressions"] == ["q2"]
    assert section["outcomes"]["n_pairs"] == 1


def test_compare_against_a_baseline_file(
    tmp_path: Path, runs: tuple[dict[str, Any], list[dict[str, Any]]]
) -> None:
    baseline, current = runs
    path = tmp_path / "reports" / "main.json"
    path.parent.mkdir()
    path.write_text(json.dumps(baseline), encoding="utf-8")
    section = compare_reports(load_baseline(path), current, baseline_path=str(path)).to_json()
    assert section["baseline"]["path"] == str(path) and section["regressions"] == ["q1"]


outcomes = st.sampled_from(["passed", "failed", "xfailed", "xpassed", "skipped"])
question = st.tuples(
    st.booleans(), st.booleans(), outcomes, outcomes, st.booleans(), st.floats(0, 1), st.floats(0, 1)
)


@settings(max_examples=40, deadline=None)
@given(st.lists(question, min_size=1, max_size=12))
def test_every_question_is_classified_once(specs: list[tuple[Any, ...]]) -> None:
    baseline_results, current = [], []
    for index, (in_baseline, in_current, before, after, edited, old, new) in enumerate(specs):
        if in_baseline:
            baseline_results.append(result(f"q{index}", before, answer_f1=old, template_id=f"t{index % 2}"))
        if in_current:
            text = "Edited?" if edited else None
            current.append(
                result(f"q{index}", after, answer_f1=new, template_id=f"t{index % 2}", question_text=text)
            )
    section = compare_reports(report(baseline_results), current, resamples=100).to_json()
    lists = ["regressions", "fixed", "new", "removed", "edited", "unchanged"]
    listed = [qid for name in lists for qid in section[name]]
    assert sorted(listed) == sorted({r["question_id"] for r in baseline_results + current})
    assert len(section["questions"]) == len(listed)
    paired = len(section["regressions"]) + len(section["fixed"]) + len(section["unchanged"])
    if paired:
        assert section["metrics"]["answer_f1"]["n_pairs"] == paired
    else:
        assert "answer_f1" not in section["metrics"]
    json.dumps(section, allow_nan=False)
