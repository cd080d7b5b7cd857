from __future__ import annotations

import itertools
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.compare.repeats import pass_at_k, pass_hat_k, summarize_attempts
from pytest_graphrag_eval.errors import ConfigurationError, InputError

counts = st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))


@given(counts)
def test_estimators_match_enumerating_every_k_subset(case: tuple[int, int, int]) -> None:
    n, c, k = case
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(attempts, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_estimator_edges() -> None:
    assert pass_at_k(10, 0, 3) == 0.0 and pass_at_k(10, 8, 3) == 1.0
    assert pass_hat_k(10, 10, 5) == 1.0 and pass_hat_k(10, 4, 5) == 0.0
    assert pass_at_k(5, 2, 1) == pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(3, 1, 4)


def attempts(*outcomes: str, f1: tuple[float, ...] = ()) -> list[dict]:
    values = f1 or (1.0,) * len(outcomes)
    return [
        {"outcome": outcome, "answer_f1": value, "answer_judge": "lexical"}
        for outcome, value in zip(outcomes, values, strict=True)
    ]


def test_summary_of_flaky_attempts() -> None:
    summary = summarize_attempts(attempts("passed", "failed", "passed", f1=(1.0, 0.2, 0.9)), k=2)
    assert (summary.attempts, summary.passes, summary.k, summary.flaky) == (3, 2, 2, True)
    assert summary.pass_at_k == pytest.approx(1.0)
    assert summary.pass_hat_k == pytest.approx(1 / 3)
    assert summary.passed is False and summary.policy == "all"
    spread = summary.metrics["answer_f1"]
    assert spread.mean == pytest.approx(0.7)
    assert spread.std == pytest.approx(statistics.stdev([1.0, 0.2, 0.9]))
    assert set(summary.metrics) == {"answer_f1"}
    assert spread.n == 3


@pytest.mark.parametrize(
    ("outcomes", "policy", "expected"),
    [
        (("passed", "passed"), "all", True),
        (("passed", "failed"), "all", False),
        (("passed", "failed"), "any", True),
        (("failed", "failed"), "any", False),
        (("passed", "failed"), "majority", False),
        (("passed", "passed", "failed"), "majority", True),
        (("skipped", "xfailed"), "all", None),
    ],
)
def test_policies(outcomes: tuple[str, ...], policy: str, expected: bool | None) -> None:
    assert summarize_attempts(attempts(*outcomes), policy=policy).passed is expected


def test_skipped_attempts_are_not_counted_and_failures_decide_without_outcome() -> None:
    summary = summarize_attempts(attempts("passed", "skipped", "passed"))
    assert (summary.attempts, summary.flaky, summary.pass_at_k) == (2, False, 1.0)
    by_failures = summarize_attempts([{"failures": []}, {"failures": ["steps_score 0 < 1"]}])
    assert (by_failures.passes, by_failures.flaky) == (1, True)
    with pytest.raises(InputError, match="neither `outcome` nor a `failures` list"):
        summarize_attempts([{"answer_f1": 1.0}])


def test_k_larger_than_the_attempts_gives_no_estimate() -> None:
    summary = summarize_attempts(attempts("passed", "failed"), k=5)
    assert summary.pass_at_k is None and summary.pass_hat_k is None


def test_bad_policy_and_k() -> None:
    with pytest.raises(ConfigurationError, match="policy must be one of all, any, majority"):
        summarize_attempts(attempts("passed"), policy="most")
    with pytest.raises(ConfigurationError, match="k must be at least 1"):
        summarize_attempts(attempts("passed"), k=0)


def test_replay_warnings_for_short_and_long_recordings() -> None:
    from pytest_graphrag_eval.compare.repeats import replay_warnings

    assert replay_warnings({"a": 3, "b": 3}, 3) == ()
    (short,) = replay_warnings({"a": 3, "b": 1, "c": 2, "d": 0}, 3)
    assert "fewer attempts for 2 of 4 question(s) (as few as 1, e.g. 'b')" in short
    (long,) = replay_warnings({"a": 5, "b": 1}, 1)
    assert long.startswith("the responses file holds up to 5 attempts per question; this run replays 1")
    assert len(replay_warnings({"a": 5, "b": 1}, 3)) == 2
