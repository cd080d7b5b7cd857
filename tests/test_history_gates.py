"""Gates over the last runs and over repeats: grammar, the slope's interval, k-of-n, flaky exclusion.

The earlier runs are plain `RunHistory` values here (what the store hands the run); the same gates
against a real SQLite history recorded by real runs are in test_history_in_run.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from comparison_support import compare_reports

from pytest_graphrag_eval.aggregates import compute_aggregates
from pytest_graphrag_eval.compare.past_runs import PastRun, RunHistory, flakiness, flaky_questions
from pytest_graphrag_eval.compare.trend import slope_trend
from pytest_graphrag_eval.errors import ConfigurationError, CorpusError, SourceLocation
from pytest_graphrag_eval.gates.history_gates import GateHistory
from pytest_graphrag_eval.gates.suite_gates import evaluate_gates, gates_from_yaml, parse_gate


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("trend:steps_score.mean>=-0.005/run@10", "trend:micro:steps_score.mean>=-0.005/run@10"),
        (
            " trend : macro:answer_f1.mean >= -0.01 / run @ 5 @ 90",
            "trend:macro:answer_f1.mean>=-0.01/run@5@90",
        ),
        ("trend:template[t1]:error_rate<=0.001/run@20", "trend:template[t1]:error_rate<=0.001/run@20"),
        ("history:passes>=4/5", "history:micro:passes>=4/5"),
        ("repeats:template[t]:passes>=2/3", "repeats:template[t]:passes>=2/3"),
        ("regressions<=0 excluding flaky", "micro:regressions<=0 excluding flaky"),
        (
            "delta:answer_f1.mean>=-0.02@95   Excluding  Flaky",
            "delta:micro:answer_f1.mean>=-0.02@95 excluding flaky",
        ),
    ],
)
def test_history_gates_parse_to_a_normal_form_that_parses_back(text: str, expression: str) -> None:
    gate = parse_gate(text)
    assert gate.expression == expression
    assert parse_gate(gate.expression) == gate
    assert gate.needs_history == (not text.startswith("repeats"))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("trend:steps_score.mean>=-0.005", "ends with the slope per run and the window"),
        ("trend:steps_score.mean>=-0.005/run@2", "from 3"),
        ("trend:steps_score.mean>-0.005/run@10", "takes >= or <="),
        ("trend:steps_score>=0/run@10", "needs a statistic"),
        ("trend:regressions<=0/run@10", "counts changes since a baseline"),
        ("trend:delta:answer_f1.mean>=0/run@10", "not of a change"),
        ("trend:steps_score.mean>=0/run@10@100", "from 50 to below 100"),
        ("history:passes>=6/5", "K in passes>=6/5"),
        ("history:passes<=4/5", "takes >="),
        ("history:steps_score.mean>=0.5", "k-of-n passes"),
        ("repeats:macro:passes>=1/2", "count questions"),
        ("steps_score.mean>=0.9 excluding flaky", "goes with gates on change"),
        ("history:passes>=4/5 excluding flaky", "goes with gates on change"),
    ],
)
def test_malformed_history_gates_say_why(text: str, reason: str) -> None:
    with pytest.raises(ConfigurationError, match="--graphrag-gate") as error:
        parse_gate(text)
    assert reason in str(error.value)


def test_corpus_file_history_gates_in_mapping_form() -> None:
    where = SourceLocation(file="corpus.yaml")
    gates = gates_from_yaml({"trend:steps_score.mean": ">=-0.01/run@10", "history:passes": ">=3/4"}, where)
    assert [gate.expression for gate in gates] == [
        "trend:micro:steps_score.mean>=-0.01/run@10",
        "history:micro:passes>=3/4",
    ]
    with pytest.raises(CorpusError, match=r"gates\.trend:steps_score\.mean.*window"):
        gates_from_yaml({"trend:steps_score.mean": -0.01}, where)


# --- the slope and its interval ----------------------------------------------------------


def test_the_slope_and_interval_are_the_least_squares_t_interval() -> None:
    stats = pytest.importorskip("scipy.stats")
    values = [0.80, 0.79, 0.81, 0.78, 0.77, 0.78, 0.76, 0.75]
    trend = slope_trend(values, 0.95)
    fit = stats.linregress(range(len(values)), values)
    half = stats.t.ppf(0.975, len(values) - 2) * fit.stderr
    assert trend.slope == pytest.approx(fit.slope)
    assert (trend.low, trend.high) == pytest.approx((fit.slope - half, fit.slope + half))
    assert trend.runs == 8


def test_a_run_without_the_value_keeps_its_place_on_the_axis() -> None:
    trend = slope_trend([0.0, None, 0.2, 0.3])
    assert trend.slope == pytest.approx(0.1)
    assert trend.runs == 3
    assert slope_trend([0.5, None]).slope is None
    two = slope_trend([0.5, 0.7])
    assert two.slope == pytest.approx(0.2) and two.low is None


# --- trend gates against earlier runs ------------------------------------------------------


def _results(scores: list[float], outcomes: list[str] | None = None) -> list[dict[str, Any]]:
    return [
        {
            "template_id": "t",
            "question_id": f"q{index}",
            "status": "success",
            "steps_score": score,
            "outcome": (outcomes or ["passed"] * len(scores))[index],
        }
        for index, score in enumerate(scores)
    ]


def _history(means: list[float], outcomes: list[dict[str, str]] | None = None, **rule: int) -> RunHistory:
    runs = tuple(
        PastRun(
            run_id=f"r{index}",
            started_at=f"2026-11-{index + 1:02d}T00:00:00Z",
            aggregates=compute_aggregates(_results([mean, mean])),
            outcomes=(outcomes or [{}] * len(means))[index],
            commit=f"c{index}",
        )
        for index, mean in enumerate(means)
    )
    return RunHistory(runs, **rule)


def _evaluate(gate: str, results: list[dict[str, Any]], history: GateHistory | None) -> Any:
    [result] = evaluate_gates([parse_gate(gate)], compute_aggregates(results), None, results, history)
    return result


def test_a_steady_slide_fails_a_trend_gate_and_noise_does_not() -> None:
    gate = "trend:steps_score.mean>=-0.005/run@10"
    slide = [0.90 - 0.02 * index for index in range(9)]
    failed = _evaluate(gate, _results([0.72, 0.72]), GateHistory(_history(slide)))
    assert not failed.passed
    assert failed.actual == pytest.approx(-0.02)
    assert "95% interval [-0.02, -0.02] lies entirely outside >= -0.005/run" in failed.message
    assert "over 10 run(s)" in failed.message
    noisy = [0.80, 0.83, 0.78, 0.82, 0.79, 0.84, 0.77, 0.81, 0.80]
    held = _evaluate(gate, _results([0.78, 0.78]), GateHistory(_history(noisy)))
    assert held.passed, held.message
    assert "reaches >= -0.005/run" in held.message


def test_the_trend_window_takes_only_the_last_runs() -> None:
    # an old slide, then ten flat runs: a window of 10 sees no slope, a window of 20 does
    history = GateHistory(_history([0.99 - 0.02 * index for index in range(10)] + [0.79] * 9))
    assert _evaluate("trend:steps_score.mean>=-0.005/run@10", _results([0.79, 0.79]), history).passed
    assert not _evaluate("trend:steps_score.mean>=-0.005/run@20", _results([0.79, 0.79]), history).passed


def test_a_trend_gate_before_three_runs_is_not_judged_and_says_so() -> None:
    result = _evaluate("trend:steps_score.mean>=0/run@10", _results([0.5, 0.5]), GateHistory(_history([0.9])))
    assert result.passed
    assert "not judged yet, a slope's interval needs 3 runs" in result.message


def test_a_trend_on_a_value_the_history_does_not_have_is_a_clear_error() -> None:
    results = [{**result, "answer_f1": 0.5} for result in _results([0.5, 0.5])]
    result = _evaluate("trend:answer_f1.mean>=0/run@10", results, GateHistory(_history([0.9, 0.8])))
    assert not result.passed
    assert "none of the last 2 recorded run(s) has micro:answer_f1.mean" in result.message
    assert "steps_score.mean" in result.message  # what the history has instead


def test_history_gates_without_a_history_fail_and_name_the_option() -> None:
    for gate in ("trend:steps_score.mean>=0/run@10", "history:passes>=1/2", "regressions<=0 excluding flaky"):
        result = _evaluate(gate, _results([0.5]), None)
        assert not result.passed
        assert "--graphrag-history" in result.message


# --- k-of-n gates ---------------------------------------------------------------------------


def test_history_passes_counts_each_questions_last_runs() -> None:
    outcomes = [
        {"q0": "passed", "q1": "failed"},
        {"q0": "failed", "q1": "failed"},
        {"q0": "passed", "q1": "passed"},
        {"q0": "passed", "q1": "skipped"},
    ]
    history = GateHistory(_history([0.5] * 4, outcomes))
    results = _results([1.0, 1.0, 1.0])  # q2 is new: one pass so far, held to the same failures
    failing = _evaluate("history:passes>=4/5", results, history)  # q1 failed twice in its last five
    assert not failing.passed and failing.actual == 1
    assert "1 of 3 question(s) passed fewer than 4 of their last 5 runs (q1)" in failing.message
    assert _evaluate("history:passes>=3/5", results, history).passed
    window_of_four = _evaluate("history:passes>=4/4", results, history)  # skipped runs are not counted
    assert window_of_four.actual == 2 and "(q0, q1)" in window_of_four.message


def test_repeats_passes_counts_each_questions_attempts() -> None:
    def attempts(*outcomes: str) -> list[dict[str, str]]:
        return [{"outcome": outcome} for outcome in outcomes]

    results = _results([1.0, 1.0])
    results[0]["attempts"] = attempts("passed", "passed", "failed", "passed", "passed")
    results[1]["attempts"] = attempts("passed", "failed", "failed", "passed", "passed")
    assert _evaluate("repeats:passes>=4/5", results, None).passed is False
    assert _evaluate("repeats:passes>=3/5", results, None).passed
    assert not _evaluate("repeats:template[other]:passes>=5/5", results, None).passed  # no question there
    single = _evaluate("repeats:passes>=1/1", _results([1.0]), None)
    assert not single.passed and "--graphrag-agent-repeats" in single.message


# --- flaky questions ----------------------------------------------------------------------------


def test_flips_and_same_commit_make_a_question_flaky() -> None:
    names = ("steady", "flip", "once", "commit", "commit_only")
    columns = {  # r0 and r1 ran on one commit; the last letter is this run
        "steady": "PPPP",
        "flip": "PPFP",
        "once": "PPPF",
        "commit": "PFPP",
        "commit_only": "FPPP",
    }
    word = {"P": "passed", "F": "failed"}
    outcomes = [{name: word[columns[name][run]] for name in names} for run in range(3)]
    history = _history([0.5] * 3, outcomes, flaky_runs=4, flaky_flips=2)
    runs = tuple(
        PastRun(**{**run.__dict__, "commit": "c0"}) if run.run_id == "r1" else run for run in history.runs
    )
    history = RunHistory(runs, flaky_runs=4, flaky_flips=2)
    results = [{"template_id": "t", "question_id": name, "outcome": word[columns[name][3]]} for name in names]
    found = {entry.question_id: entry for entry in flakiness(history, results, "c9")}
    assert {name: (entry.flips, entry.same_commit) for name, entry in found.items()} == {
        "steady": (0, False),
        "flip": (2, False),
        "once": (1, False),
        "commit": (2, True),
        "commit_only": (1, True),
    }
    assert found["flip"].outcomes == ("passed", "passed", "failed", "passed")
    flaky = [entry.question_id for entry in flaky_questions(history, results, "c9")]
    assert flaky == ["flip", "commit", "commit_only"]
    strict = RunHistory(runs, flaky_runs=4, flaky_flips=3)
    assert [entry.question_id for entry in flaky_questions(strict, results, "c9")] == [
        "commit",
        "commit_only",
    ]


def test_a_change_gate_excluding_flaky_leaves_them_out_and_says_how_many() -> None:
    pytest.importorskip("scipy")
    baseline_results = [
        {"template_id": "t", "question_id": f"q{index}", "outcome": "passed", "steps_score": 1.0}
        for index in range(6)
    ]
    baseline = {"format_version": 2, "results": baseline_results}
    current = [dict(result) for result in baseline_results]
    for flaky_one in (current[0], current[1]):
        flaky_one.update(outcome="failed", steps_score=0.0)
    history = _history([1.0] * 2, [{"q0": "failed", "q1": "failed"}, {"q0": "passed", "q1": "passed"}])
    flaky = tuple(found.question_id for found in flaky_questions(history, current, None))
    assert flaky == ("q0", "q1")
    everything = compare_reports(baseline, current, baseline_path="base.json")
    without = compare_reports(
        {**baseline, "results": baseline_results[2:]}, current[2:], baseline_path="base.json"
    )
    gates = [parse_gate("regressions<=0"), parse_gate("regressions<=0 excluding flaky")]
    plain, excluding = evaluate_gates(
        gates, compute_aggregates(current), everything, current, GateHistory(history, flaky, without)
    )
    assert not plain.passed and plain.actual == 2
    assert excluding.passed and excluding.actual == 0
    assert "2 flaky question(s) excluded: q0, q1" in excluding.message
    assert excluding.record().excluding_flaky == ("q0", "q1")


def test_a_question_expected_to_fail_is_not_held_to_k_of_n() -> None:
    results = _results([1.0, 0.0], ["passed", "xfailed"])
    results[0]["attempts"] = [{"outcome": "passed"}] * 3
    results[1]["attempts"] = [{"outcome": "failed"}] * 3
    assert _evaluate("repeats:passes>=3/3", results, None).passed
    history = GateHistory(_history([0.5] * 2, [{"q1": "failed"}, {"q1": "failed"}]))
    assert _evaluate("history:passes>=3/3", results, history).passed
    results[1]["outcome"] = "failed"
    assert not _evaluate("history:passes>=3/3", results, history).passed
