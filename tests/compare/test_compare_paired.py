from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from threadpoolctl import threadpool_info, threadpool_limits

from pytest_graphrag_eval.compare import bootstrap
from pytest_graphrag_eval.compare.bootstrap import studentized_intervals
from pytest_graphrag_eval.compare.numeric import one_blas_thread
from pytest_graphrag_eval.compare.paired import (
    PairedSample,
    binary_change,
    mcnemar_exact,
    min_detectable_delta,
    min_discordant_pairs,
    paired_changes,
)

differences = st.lists(st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 3)), min_size=2, max_size=60)


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_is_the_exact_binomial_test(losses: int, gains: int) -> None:
    expected = 1.0 if losses + gains == 0 else stats.binomtest(losses, losses + gains, 0.5).pvalue
    assert mcnemar_exact(losses, gains) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def sample_from_table(same: int, losses: int, gains: int) -> PairedSample:
    baseline = (1.0,) * same + (1.0,) * losses + (0.0,) * gains
    current = (1.0,) * same + (0.0,) * losses + (1.0,) * gains
    return PairedSample(baseline, current)


@given(st.integers(0, 40), st.integers(0, 25), st.integers(0, 25), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_binary_interval_excludes_zero_exactly_when_mcnemar_rejects(
    same: int, losses: int, gains: int, confidence: float
) -> None:
    if same + losses + gains == 0:
        return
    change = binary_change(sample_from_table(same, losses, gains), confidence=confidence)
    assert change.test == "mcnemar"
    assert change.delta == pytest.approx((gains - losses) / (same + losses + gains))
    low, high, delta = change.ci_low, change.ci_high, change.delta
    assert low is not None and high is not None and delta is not None and change.p_value is not None
    assert low <= delta <= high
    excludes_zero = high < 0 or low > 0
    assert excludes_zero == (change.p_value < 1 - confidence)


def test_zero_one_metrics_are_detected_from_the_values() -> None:
    changes = paired_changes(
        {
            "steps_score": PairedSample((1.0, 1.0, 0.0), (0.0, 1.0, 0.0)),
            "answer_f1": PairedSample((1.0, 0.5, 0.0), (0.0, 1.0, 0.0)),
        },
        confidence=0.95,
        resamples=200,
        seed=0,
    )
    assert changes["steps_score"].test == "mcnemar"
    assert changes["answer_f1"].test == "bootstrap"


@settings(max_examples=30, deadline=None)
@given(differences, st.integers(0, 2**32 - 1))
def test_bootstrap_is_deterministic_for_a_seed(values: list[float], seed: int) -> None:
    first = studentized_intervals([values], confidence=0.95, resamples=300, seed=seed)
    again = studentized_intervals([values], confidence=0.95, resamples=300, seed=seed)
    assert first == again
    interval = first[0]
    assert interval.low <= interval.mean <= interval.high
    assert 0.0 <= interval.p_value <= 1.0


@settings(max_examples=30, deadline=None)
@given(differences)
def test_interval_is_never_narrower_than_student_t(values: list[float]) -> None:
    interval = studentized_intervals([values], confidence=0.95, resamples=300, seed=1)[0]
    spread = statistics.stdev(values)
    if spread == 0:
        return
    half = stats.t.ppf(0.975, len(values) - 1) * spread / math.sqrt(len(values))
    assert interval.low <= interval.mean - half + 1e-12
    assert interval.high >= interval.mean + half - 1e-12
    student_p = stats.ttest_1samp(values, 0.0).pvalue
    assert interval.p_value >= student_p - 1e-12


def test_columns_of_one_batch_match_separate_runs_closely() -> None:
    a = [0.1, -0.2, 0.0, 0.3, -0.5, 0.05, 0.2, -0.1]
    b = [0.0, 0.0, -0.25, 0.0, -0.5, 0.0, 0.0, 0.0]
    together = studentized_intervals([a, b], confidence=0.9, resamples=500, seed=3)
    alone = studentized_intervals([b], confidence=0.9, resamples=500, seed=3)
    assert together[1].low == pytest.approx(alone[0].low, abs=1e-12)
    assert together[1].high == pytest.approx(alone[0].high, abs=1e-12)


def test_a_clear_drop_is_significant_and_noise_is_not() -> None:
    drop = [-0.3, -0.2, -0.25, -0.1, -0.3, -0.2, -0.15, -0.25, -0.2, -0.3] * 2
    change = studentized_intervals([drop], confidence=0.95, resamples=1000, seed=0)[0]
    assert change.high < 0 and change.p_value < 0.01
    noise = [0.1, -0.1, 0.2, -0.2, 0.05, -0.05, 0.0, 0.15, -0.15, 0.0]
    change = studentized_intervals([noise], confidence=0.95, resamples=1000, seed=0)[0]
    assert change.low < 0 < change.high and change.p_value > 0.5


def test_constant_differences_have_a_point_interval() -> None:
    same = {"m": PairedSample((0.5,) * 4, (0.5,) * 4)}
    assert paired_changes(same, confidence=0.95, resamples=100, seed=0)["m"].p_value == 1.0
    shifted = studentized_intervals([[0.25] * 5], confidence=0.95, resamples=100, seed=0)[0]
    assert (shifted.low, shifted.high, shifted.p_value) == (0.25, 0.25, 0.0)


def test_one_pair_has_no_interval() -> None:
    change = paired_changes({"m": PairedSample((0.2,), (0.7,))}, confidence=0.95, resamples=100, seed=0)["m"]
    assert change.delta == pytest.approx(0.5)
    assert (change.ci_low, change.ci_high, change.p_value, change.min_detectable_delta) == (None,) * 4


def test_min_detectable_delta_formula() -> None:
    values = [0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0.1, -0.3, 0.0, 0.15]
    n = len(values)
    factor = stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)
    expected = factor * statistics.stdev(values) / math.sqrt(n)
    assert min_detectable_delta(values, confidence=0.95) == pytest.approx(expected)
    assert min_detectable_delta(values * 4, confidence=0.95) < expected / 1.9


def test_binary_min_detectable_delta_has_the_mcnemar_floor() -> None:
    assert min_discordant_pairs(0.95) == 6
    assert 2 * 0.5**6 < 0.05 <= 2 * 0.5**5
    assert min_detectable_delta([0.0] * 40, confidence=0.95, binary=True) == pytest.approx(6 / 40)


@settings(max_examples=40, deadline=None)
@given(differences, st.sampled_from([0.8, 0.9, 0.95]))
def test_bootstrap_interval_excludes_zero_exactly_when_p_is_small(
    values: list[float], confidence: float
) -> None:
    interval = studentized_intervals([values], confidence=confidence, resamples=400, seed=5)[0]
    if min(values) == max(values):
        return
    assert (interval.high < 0 or interval.low > 0) == (interval.p_value < 1 - confidence)


def test_intervals_of_unit_scores_stay_within_minus_one_and_one() -> None:
    wide = paired_changes(
        {
            "f1": PairedSample((0.9, 0.1, 0.5), (0.1, 0.9, 0.0)),
            "tokens": PairedSample((90, 10, 50), (10, 90, 0)),
        },
        confidence=0.95,
        resamples=200,
        seed=0,
    )
    assert (wide["f1"].ci_low, wide["f1"].ci_high) == (-1.0, 1.0)
    assert wide["tokens"].ci_low is not None and wide["tokens"].ci_low < -100


def test_large_samples_draw_the_counts_of_one_pass_over_the_chunk() -> None:
    """From 1,000 items on the counts are made row by row: the very counts of one bincount per chunk,
    so an interval's numbers do not depend on how the counting was done."""
    n, resamples, seed = 3000, 1500, 4
    rng = np.random.default_rng(seed)
    per_chunk = max(1, bootstrap._CHUNK_CELLS // n)
    expected = []
    for start in range(0, resamples, per_chunk):
        rows = min(per_chunk, resamples - start)
        draws = rng.integers(0, n, size=(rows, n), dtype=np.int32)
        draws += (np.arange(rows, dtype=np.int32) * n)[:, None]
        expected.append(np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(float))
    drawn = list(bootstrap.resample_counts(n, resamples, seed))
    assert len(drawn) == len(expected) > 1
    for chunk, reference in zip(drawn, expected, strict=True):
        assert chunk.dtype == reference.dtype and np.array_equal(chunk, reference)


def test_a_change_is_written_with_every_field_in_order() -> None:
    sample = PairedSample((0.2, 0.4, 0.9), (0.3, 0.4, 0.7))
    for change in (*paired_changes({"m": sample}, confidence=0.95, resamples=200, seed=0).values(),
                   binary_change(PairedSample((0.0, 1.0), (1.0, 1.0)), confidence=0.95)):  # fmt: skip
        assert list(change.to_dict().items()) == list(dataclasses.asdict(change).items())


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_one_blas_thread_is_held_for_the_block_only() -> None:
    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() and set(blas_threads()) == {1}
    assert blas_threads() == before


def test_a_comparison_is_the_same_whatever_the_machine_s_blas_threads() -> None:
    """With BLAS threads a product's sums are split by the number of cores, and a bound's last digit
    followed the machine; the bootstrap keeps its products on one thread."""
    rng = np.random.default_rng(3)
    samples = {
        f"m{index}": PairedSample(
            tuple(rng.normal(size=2_500).round(2)), tuple(rng.normal(size=2_500).round(2))
        )
        for index in range(3)
    }
    compared = paired_changes(samples, confidence=0.95, resamples=400, seed=1)
    with threadpool_limits(limits=1, user_api="blas"):
        assert paired_changes(samples, confidence=0.95, resamples=400, seed=1) == compared
