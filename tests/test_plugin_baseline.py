"""Regression testing against a baseline report, driven as a user would (issue: regression testing proper)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from plugin_support import ROWS, reference_step, response, write_corpus, write_responses
from test_example_project import REGRESSED_ERROR, REGRESSED_STEPS

from pytest_graphrag_eval.report.run_terminal import _deltas_text

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
THRESHOLD = ["--graphrag-threshold", "steps_score>=1"]
ROWS_Q4 = [["s6", "Zeta"]]


def _question(question_id: str, rows: list[list[str]], text: str | None = None) -> dict[str, Any]:
    return {
        "id": question_id,
        "question_text": text or f"Names of {question_id}?",
        "reference_answer": ", ".join(row[1] for row in rows),
        "reference_steps": [[reference_step(rows)]],
    }


def _corpus(questions: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"template_id": template, "questions": items} for template, items in questions.items()]


def _run_baseline(pytester: pytest.Pytester) -> Path:
    """Baseline: q1 and q3 right, q2 wrong (fails), and a q5 the next run no longer has."""
    write_corpus(
        pytester,
        _corpus(
            {
                "names": [_question("q1", ROWS["q1"]), _question("q2", ROWS["q2"])],
                "others": [_question("q3", ROWS["q3"]), _question("q5", ROWS["q3"])],
            }
        ),
    )
    responses = [
        response("q1"),
        response("q2", rows=[]),
        response("q3"),
        {**response("q3"), "question_id": "q5"},
    ]
    write_responses(pytester, responses)
    result = pytester.runpytest(*REPLAY, *THRESHOLD, "--graphrag-report", "baseline.json")
    result.assert_outcomes(passed=3, failed=1)
    return pytester.path / "baseline.json"


@pytest.fixture
def compared(pytester: pytest.Pytester) -> pytest.Pytester:
    """Current run: q1 regressed, q2 fixed, q3 edited (new text), q4 new, q5 removed."""
    _run_baseline(pytester)
    write_corpus(
        pytester,
        _corpus(
            {
                "names": [_question("q1", ROWS["q1"]), _question("q2", ROWS["q2"])],
                "others": [
                    _question("q3", ROWS["q3"], text="Names of set three, please?"),
                    _question("q4", ROWS_Q4),
                ],
            }
        ),
    )
    q4 = response("q3")
    q4["question_id"] = "q4"
    q4["actual_steps"][0]["output"] = json.dumps(
        {
            "head": {"vars": ["x", "y"]},
            "results": {
                "bindings": [
                    {"x": {"type": "literal", "value": "s6"}, "y": {"type": "literal", "value": "Zeta"}}
                ]
            },
        }
    )
    write_responses(pytester, [response("q1", rows=[]), response("q2"), response("q3"), q4])
    return pytester


def test_every_classification_lands_in_the_report(compared: pytest.Pytester) -> None:
    result = compared.runpytest(
        *REPLAY, *THRESHOLD, "--graphrag-baseline", "baseline.json", "--graphrag-report", "current.json"
    )
    result.assert_outcomes(passed=3, failed=1)
    report = json.loads((compared.path / "current.json").read_text(encoding="utf-8"))
    assert report["format_version"] == 2
    comparison = report["comparison"]
    assert (comparison["regressions"], comparison["fixed"]) == (["q1"], ["q2"])
    assert (comparison["edited"], comparison["new"], comparison["removed"]) == (["q3"], ["q4"], ["q5"])
    assert comparison["unchanged"] == []
    by_id = {change["question_id"]: change for change in comparison["questions"]}
    assert by_id["q1"]["deltas"]["steps_score"] == {"baseline": 1.0, "current": 0.0, "delta": -1.0}
    assert by_id["q1"]["baseline_outcome"] == "passed" and by_id["q1"]["current_outcome"] == "failed"
    assert comparison["metrics"]["steps_score"]["n_pairs"] == 2  # q1 and q2; edited q3 is left out
    for key in ("baseline", "current", "delta", "ci_low", "ci_high", "p_value"):
        assert key in comparison["metrics"]["steps_score"]
    assert all(result["content_hash"].startswith("sha256:") for result in report["results"])


def test_terminal_block_failure_line_and_junit_deltas(compared: pytest.Pytester) -> None:
    result = compared.runpytest(
        *REPLAY, *THRESHOLD, "--graphrag-baseline", "baseline.json", "--junitxml", "junit.xml"
    )
    result.stdout.fnmatch_lines(
        [
            "*REGRESSED: this question passed in the baseline run*",
            "*since baseline (*baseline.json): 1 regressions, 1 fixed, 1 new, 1 removed, 1 edited",
            "regressed:",
            "*names::q1  steps_score 1 -> 0*stopped matching: reference_steps[[]0][[]0] (sparql_query)",
            "fixed:",
            "*corpus.yaml::names::q2  steps_score 0 -> 1*",
            "paired changes over questions in both runs*",
            "*pass rate*",
            "*steps_score*",
        ]
    )
    properties = {
        (case.get("name"), prop.get("name")): prop.get("value")
        for case in ElementTree.parse(compared.path / "junit.xml").iter("testcase")
        for prop in case.iter("property")
    }
    assert float(properties[("q1", "graphrag.delta.steps_score")]) == -1.0
    assert float(properties[("q2", "graphrag.delta.steps_score")]) == 1.0
    assert ("q4", "graphrag.delta.steps_score") not in properties


@pytest.mark.parametrize(
    ("gate", "passed"),
    [
        ("regressions<=0", False),
        ("fixed>=1", True),
        ("new==1", True),
        ("removed==1", True),
        ("edited<=0", False),
        ("template[names]:regressions<=0", False),
        ("template[others]:regressions<=0", True),
        ("delta:steps_score.mean>=0", True),
        ("delta:template[names]:steps_score.mean>=0", True),
        ("delta:steps_score.mean>=-0.5@95", True),
        ("delta:steps_score.mean>=0.5", False),
    ],
)
def test_gate_forms_on_change(compared: pytest.Pytester, gate: str, passed: bool) -> None:
    result = compared.runpytest(
        *REPLAY,
        *THRESHOLD,
        "--graphrag-baseline",
        "baseline.json",
        "--graphrag-gate",
        gate,
        "--graphrag-report",
        "r.json",
    )
    [outcome] = json.loads((compared.path / "r.json").read_text(encoding="utf-8"))["gates"]
    assert outcome["passed"] is passed
    assert f"{'PASS' if passed else 'FAIL'}  {outcome['message']}" in result.stdout.str()


def test_markdown_summary_names_the_regression(compared: pytest.Pytester) -> None:
    compared.runpytest(
        *REPLAY, *THRESHOLD, "--graphrag-baseline", "baseline.json", "--graphrag-markdown", "out.md"
    )
    markdown = (compared.path / "out.md").read_text(encoding="utf-8")
    assert "Changes since the baseline" in markdown
    assert "corpus.yaml::names::q1" in markdown.replace("\\", "")


def test_a_gate_on_change_without_a_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _run_baseline(pytester)
    result = pytester.runpytest(*REPLAY, "--graphrag-gate", "delta:steps_score.mean>=0@95")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*delta:micro:steps_score.mean>=0@95 compares with a baseline run*--graphrag-baseline*"]
    )


def test_a_corpus_gate_on_change_without_a_baseline_names_the_file(pytester: pytest.Pytester) -> None:
    write_corpus(
        pytester,
        {"templates": _corpus({"names": [_question("q1", ROWS["q1"])]}), "gates": ["regressions<=0"]},
    )
    write_responses(pytester, [response("q1")])
    result = pytester.runpytest(*REPLAY)
    result.stdout.fnmatch_lines(["*corpus.yaml*gates*regressions<=0 compares with a baseline run*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "*missing.json*"),
        ("{not json", "*baseline.json*"),
        (json.dumps({"format_version": 1, "results": []}), "*baseline.json*regenerate*"),
    ],
)
def test_an_unusable_baseline_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, content: str | None, message: str
) -> None:
    write_corpus(pytester, _corpus({"names": [_question("q1", ROWS["q1"])]}))
    write_responses(pytester, [response("q1")])
    name = "missing.json" if content is None else "baseline.json"
    if content is not None:
        (pytester.path / name).write_text(content, encoding="utf-8")
    result = pytester.runpytest(*REPLAY, "--graphrag-baseline", name)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def _example_run(tmp_path: Path, recording: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "example_project", "-q", "-p", "no:cacheprovider"]
    command += ["--graphrag-responses", f"example_project/recordings/{recording}", *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "xdist"])
def test_example_regression_against_its_good_recording(tmp_path: Path, workers: str | None) -> None:
    """The recorded regression, compared with the good recording, lists exactly what it broke."""
    baseline = tmp_path / "baseline.json"
    _example_run(tmp_path, "responses.jsonl", "--graphrag-report", str(baseline))
    current = tmp_path / "current.json"
    extra = ["-n", workers] if workers else []
    completed = _example_run(
        tmp_path,
        "regression.jsonl",
        "--graphrag-baseline",
        str(baseline),
        "--graphrag-gate",
        "regressions<=0",
        "--graphrag-report",
        str(current),
        *extra,
    )
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED
    assert "FAIL  micro:regressions = 9, required <= 0, cli gate" in completed.stdout
    comparison = json.loads(current.read_text(encoding="utf-8"))["comparison"]
    assert set(comparison["regressions"]) == REGRESSED_STEPS | {REGRESSED_ERROR}
    assert comparison["fixed"] == comparison["new"] == comparison["removed"] == comparison["edited"] == []


def test_html_report_is_written_with_the_comparison(compared: pytest.Pytester) -> None:
    compared.runpytest(
        *REPLAY, *THRESHOLD, "--graphrag-baseline", "baseline.json", "--graphrag-html", "out/r.html"
    )
    page = (compared.path / "out" / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert 'data-testid="card-regressed">1<' in page.replace("\n", "")


def test_a_regression_line_shows_scores_leading_ones_first() -> None:
    deltas = {
        "answer_eval_cost": {"baseline": 0.01, "current": 0.02, "delta": 0.01},
        "answer_f1_stdev": {"baseline": 0.1, "current": 0.2, "delta": 0.1},
        "answer_matching_claims_count": {"baseline": 2, "current": 1, "delta": -1},
        "answer_token_f1": {"baseline": 0.5, "current": 0.25, "delta": -0.25},
        "answer_f1": {"baseline": 1.0, "current": 0.5, "delta": -0.5},
        "steps_score": {"baseline": 1.0, "current": 1.0, "delta": 0.0},
    }
    assert _deltas_text(deltas) == "answer_f1 1 -> 0.5, answer_token_f1 0.5 -> 0.25"
