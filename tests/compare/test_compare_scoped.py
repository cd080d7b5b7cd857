"""A comparison counts the 0/1 metrics of all its templates at once, as each template's own counts
would give them, and says when its section is plain JSON (written by orjson) or not (written by the
standard library)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compare_support import report, result, same_change
from comparison_support import compare_reports
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from pytest_graphrag_eval.aggregates import is_metric_value
from pytest_graphrag_eval.compare.metrics import metric_values
from pytest_graphrag_eval.compare.paired import (
    PairedSample,
    _spread,
    mcnemar_exact,
    min_detectable_delta,
    paired_changes,
    scoped_paired_changes,
)
from pytest_graphrag_eval.run.end_of_run import conclude_run
from pytest_graphrag_eval.run.pipeline import OutputPaths, RunSettings


def test_binary_changes_of_many_scopes_are_each_scopes_own() -> None:
    """The 0/1 metrics of all scopes counted together give, field for field, the per-sample formulas."""
    rng = np.random.default_rng(7)
    scopes: dict[str | None, dict[str, PairedSample]] = {}
    for scope in [None, *(f"t{index}" for index in range(30))]:
        size = int(rng.integers(0, 60))
        before = rng.integers(0, 2, size).astype(float)
        after = np.where(rng.random(size) < 0.2, 1.0 - before, before)
        scopes[scope] = {"match": PairedSample(before, after), "f1": PairedSample(before * 0.5 + 0.25, after)}
    changed = scoped_paired_changes(scopes, confidence=0.9, resamples=200, seed=1)
    for scope, samples in scopes.items():
        assert same_change(changed[scope], paired_changes(samples, confidence=0.9, resamples=200, seed=1))
        sample = samples["match"]
        change = changed[scope]["match"]
        before, after = np.asarray(sample.baseline), np.asarray(sample.current)
        if before.size == 0:
            assert change.test == "none"
            continue
        losses, gains = int(np.count_nonzero(before > after)), int(np.count_nonzero(before < after))
        assert change.test == "mcnemar"
        assert change.baseline == float(before.mean()) and change.current == float(after.mean())
        assert change.delta == (gains - losses) / before.size
        assert change.p_value == mcnemar_exact(losses, gains)
        assert change.min_detectable_delta == min_detectable_delta(
            after - before, confidence=0.9, binary=True
        )
        scale = (losses + gains) / before.size
        low = (
            scale * (2 * float(special.betaincinv(gains, losses + 1, (1.0 - 0.9) / 2)) - 1)
            if gains
            else -scale
        )
        assert change.ci_low == (min(low, change.delta) if losses + gains else 0.0)
        assert changed[scope]["f1"].test in ("bootstrap", "none")


def _report_written(tmp_path: Path, baseline: dict[str, Any], current: list[dict[str, Any]]) -> bytes:
    """The JSON report a run with this baseline writes, through the end every run shares."""
    settings = RunSettings(baseline=baseline, baseline_path="baseline.json", resamples=200)
    path = tmp_path / "report.json"
    outcome = conclude_run(
        current, settings, OutputPaths(report=path), started=0.0, interrupted=False, finished=1.0
    )
    assert outcome.written == [("JSON report", path)]
    return path.read_bytes()


def _stdlib_written(path: Path) -> bytes:
    return json.dumps(json.loads(path.read_bytes()), indent=2, ensure_ascii=False).encode() + b"\n"


def test_a_finite_comparison_is_plain_json_written_as_the_standard_library_writes_it(tmp_path: Path) -> None:
    baseline = report([result(f"q{i}", score=i / 7, count=i, ratio=1e-5 * i) for i in range(12)])
    current = [
        result(f"q{i}", "failed" if i % 3 else "passed", score=i / 9, count=2, ratio=3.0) for i in range(12)
    ]
    assert compare_reports(baseline, current, resamples=200).all_finite

    written = _report_written(tmp_path, baseline, current)

    assert b"1e-05" in written  # a float orjson writes otherwise, written as Python does
    assert written == _stdlib_written(tmp_path / "report.json")


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize(
    ("before", "after", "started_at"),
    [(-1e308, 1e308, "2026-11-01T10:00:00Z"), (0.5, 0.5, math.nan)],
    ids=["a delta beyond the largest float", "a baseline started_at that is not a text"],
)
def test_a_comparison_with_a_number_json_cannot_hold_is_written_by_the_standard_library(
    tmp_path: Path, before: float, after: float, started_at: Any
) -> None:
    """orjson writes infinity and NaN as null: the standard library writes such a section, and keeps them."""
    baseline = report([result("q1", score=before), result("q2", score=0.0)])
    baseline["metadata"]["started_at"] = started_at
    current = [result("q1", score=after), result("q2", score=1.0)]
    assert not compare_reports(baseline, current, resamples=200).all_finite

    written = _report_written(tmp_path, baseline, current)

    section = json.loads(written)["comparison"]
    shown = section["questions"][0]["deltas"]["score"]["delta"] if before != after else section["baseline"]
    assert math.isinf(shown) if before != after else math.isnan(shown["started_at"])


def test_bootstraps_of_many_scopes_of_one_size_are_each_scopes_own() -> None:
    """Samples of one length share bootstrap passes (at most 256 columns each): each interval is its own."""
    rng = np.random.default_rng(11)
    scopes: dict[str | None, dict[str, PairedSample]] = {
        f"t{index}": {"f1": PairedSample(rng.random(20), rng.random(20))} for index in range(300)
    }
    changed = scoped_paired_changes(scopes, confidence=0.95, resamples=200, seed=3)
    for scope, samples in scopes.items():
        assert same_change(changed[scope], paired_changes(samples, confidence=0.95, resamples=200, seed=3))
    assert len({change["f1"].ci_low for change in changed.values()}) > 250  # not one interval for all


VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**15), 10**15),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
    st.lists(st.integers(), max_size=1),
    st.sampled_from([np.float64(0.5), np.float64("inf"), np.int64(3), -0.0]),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["question_id", "score", "count", "flag", "text"]), VALUES))
def test_metric_values_are_the_finite_metric_values_in_key_order(result: dict[str, Any]) -> None:
    expected = {
        key: float(value)
        for key, value in result.items()
        if is_metric_value(key, value) and math.isfinite(value)
    }
    found = metric_values(result)
    assert list(found.items()) == list(expected.items())
    assert all(type(value) is float for value in found.values())


def test_a_metric_some_results_lack_is_paired_only_where_both_runs_have_it() -> None:
    """Rows read in one call when they hold every metric, one lookup at a time otherwise: a metric
    missing (or not finite) on either side leaves that question out of its samples only."""
    baseline = [result("a", f1=0.5, tokens=10), result("b", f1=1.0), result("c", f1=0.0, tokens=7)]
    current = [result("a", f1=1.0, tokens=12), result("b", f1=1.0, tokens=3), result("c", f1=0.5)]
    comparison = compare_reports(report(baseline), current, resamples=200)
    assert comparison.samples[None]["f1"].baseline.tolist() == [0.5, 1.0, 0.0]
    assert comparison.samples[None]["f1"].current.tolist() == [1.0, 1.0, 0.5]
    assert comparison.samples[None]["tokens"].baseline.tolist() == [10.0]
    assert comparison.samples[None]["tokens"].current.tolist() == [12.0]
    one_metric = compare_reports(report([result("a", f1=0.5)]), [result("a", f1=1.0), result("d", f1=0.0)])
    assert list(one_metric.samples[None]) == ["f1"]
    assert one_metric.samples[None]["f1"].current.tolist() == [1.0]


def test_the_spread_of_a_sample_is_numpy_s_standard_deviation_bit_for_bit() -> None:
    """The detectable change reads each sample's spread by numpy's own steps: the report's digits stay."""
    rng = np.random.default_rng(3)
    for size in [2, 3, 7, 40, 257, 10_000]:
        for values in (rng.integers(-1, 2, size).astype(float), rng.random(size) - rng.random(size)):
            assert _spread(np, values) == float(np.std(values, ddof=1))
