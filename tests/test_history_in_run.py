"""History in the run, against a real SQLite history recorded by real runs of the example project.

Nightly runs ask a live agent (`live_recording_agent`) that answers like the good recording one
night and like the regression recording the next, so the questions the regression breaks flip
every night under the same inputs (a live agent is one input): the history calls them flaky, a
baseline comes from the store (`history:last`, `history:last-passed`, `history:BRANCH`), and trend
and k-of-n gates judge the last runs. Each run is `pytest example_project` in a subprocess, as CI
runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from html_report_support import EXAMPLE, REGRESSION, ROOT

from pytest_graphrag_eval.commands.merge import merge_main
from pytest_graphrag_eval.history.store import open_history

GOOD = EXAMPLE / "recordings" / "responses.jsonl"


def run(
    folder: Path,
    name: str,
    history: Path,
    responses: Path,
    *options: str,
    branch: str = "main",
    live: bool = False,
) -> tuple[dict[str, Any], str]:
    """One run of the example project recorded in `history`; its JSON report and terminal output.
    `live`: the answers come from a live agent answering as `responses` does."""
    report = folder / f"{name}.json"
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "CI", "GITLAB"))
    }
    environ.update(GITHUB_SHA=f"commit-{name}", GITHUB_REF_NAME=branch)
    answers = ["--graphrag-responses", str(responses)]
    if live:
        environ["GRAPHRAG_TEST_AGENT_RECORDING"] = str(responses)
        environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), environ.get("PYTHONPATH", "")])
        answers = ["-p", "live_recording_agent"]
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLE),
            "-p",
            "no:cacheprovider",
            "-q",
            "--graphrag-report",
            str(report),
            "--graphrag-html",
            str(report.with_suffix(".html")),
            "--graphrag-markdown",
            str(report.with_suffix(".md")),
            *answers,
            "--graphrag-history",
            str(history),
            "--graphrag-flaky-runs=5",
            *options,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environ,
    )
    output = completed.stdout + completed.stderr
    assert report.exists(), f"the run wrote no report:\n{output[-3000:]}"
    return json.loads(report.read_text(encoding="utf-8")), output


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {result["question_id"]: result["outcome"] for result in report["results"]}


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Nights on main (good, regression, good), one on a feature branch (regression), then a run on main.

    The run on main looks at main's earlier runs only; its `history:last` baseline is the newest run of any
    branch, the feature branch's.
    """
    folder = tmp_path_factory.mktemp("nights")
    history = folder / "history.sqlite"
    recorded = [
        run(
            folder, f"night{night}", history, GOOD if night % 2 == 0 else REGRESSION, branch=branch, live=True
        )[0]
        for night, branch in enumerate(["main", "main", "main", "feature"])
    ]
    judged, output = run(
        folder,
        "judged",
        history,
        GOOD,
        "--graphrag-baseline=history:last",
        "--graphrag-gate=trend:steps_score.mean>=-0.5/run@5",
        "--graphrag-gate=trend:answer_f1.mean>=0/run@3",
        "--graphrag-gate=history:passes>=5/5",
        "--graphrag-gate=fixed<=0",
        "--graphrag-gate=fixed<=0 excluding flaky",
        "-o",
        "graphrag_gates=",
        live=True,
    )
    return {"folder": folder, "history": history, "recorded": recorded, "judged": judged, "output": output}


def test_the_questions_that_flip_every_night_are_flaky_everywhere(nights: dict[str, Any]) -> None:
    good, bad = outcomes(nights["recorded"][0]), outcomes(nights["recorded"][1])
    flipping = [question for question in good if good[question] != bad[question]]
    assert flipping, "the regression recording breaks some questions"
    judged = nights["judged"]
    flaky = judged["history"]["flaky"]
    assert [entry["question_id"] for entry in flaky] == flipping
    assert flaky[0]["flips"] == 2
    assert flaky[0]["outcomes"] == ["passed", "failed", "passed", "passed"]
    assert [entry["run_id"] for entry in judged["history"]["runs"]] == ["1", "2", "3", "this run"]
    steady = next(question for question in good if question not in flipping)
    assert judged["history"]["questions"][steady] == [good[steady]] * 4
    # the terminal, the Markdown summary and the HTML report mark them
    output = nights["output"]
    assert f"history: {len(flipping)} flaky question(s) over the last 4 run(s)" in output
    assert re.search(rf"flaky  \S*{re.escape(flipping[0])}\S*  PFPP  2 flips", output)
    markdown = (nights["folder"] / "judged.md").read_text(encoding="utf-8")
    assert f"### Flaky questions ({len(flipping)})" in markdown and "`PFPP`" in markdown
    html = (nights["folder"] / "judged.html").read_text(encoding="utf-8")
    assert '<section id="history"' in html and html.count('<tr data-question="') == len(flipping)


def test_the_baseline_comes_from_the_history(nights: dict[str, Any]) -> None:
    judged = nights["judged"]
    baseline = judged["comparison"]["baseline"]
    assert baseline["path"].startswith("history:last (run 4, ")
    bad = outcomes(nights["recorded"][1])
    assert sorted(judged["comparison"]["fixed"]) == sorted(
        q for q, outcome in bad.items() if outcome == "failed"
    )


def test_history_gates_judge_the_last_runs(nights: dict[str, Any]) -> None:
    gates = {gate["expression"]: gate for gate in nights["judged"]["gates"]}
    steady = gates["trend:micro:steps_score.mean>=-0.5/run@5"]
    assert steady["passed"] and steady["over"] == "trend" and steady["window"] == 5
    assert "over 4 run(s), 95% interval" in steady["message"]  # main has three runs before this one
    kofn = gates["history:micro:passes>=5/5"]
    flaky = nights["judged"]["history"]["flaky"]
    assert not kofn["passed"] and kofn["actual"] == len(flaky)
    fixed = gates["micro:fixed<=0"]
    excluding = gates["micro:fixed<=0 excluding flaky"]
    assert not fixed["passed"] and fixed["actual"] == len(flaky)
    assert excluding["passed"] and excluding["actual"] == 0
    assert excluding["excluding_flaky"] == [entry["question_id"] for entry in flaky]
    assert f"{len(flaky)} flaky question(s) excluded" in excluding["message"]


def test_the_run_was_recorded_with_its_history_section(nights: dict[str, Any]) -> None:
    with open_history(str(nights["history"])) as store:
        runs = store.runs()
        assert [summary.run_id for summary in runs] == [5, 4, 3, 2, 1]
        assert store.load_report(5)["history"] == nights["judged"]["history"]


@pytest.mark.parametrize(
    ("ref", "expected_run"),
    [("last", 5), ("last-passed", 3), ("feature", 4), ("main", 5), ("2", 2)],
)
def test_each_history_reference_picks_its_run(nights: dict[str, Any], ref: str, expected_run: int) -> None:
    """`history:REF` resolves to the run `graphrag-eval-history show REF` names (checked without a run)."""
    with open_history(str(nights["history"])) as store:
        assert store.resolve(ref).run_id == expected_run


def test_a_branch_baseline_and_a_missing_one(nights: dict[str, Any], tmp_path: Path) -> None:
    copy = tmp_path / "history.sqlite"
    copy.write_bytes(nights["history"].read_bytes())
    report, _ = run(
        tmp_path, "against-feature", copy, GOOD, "--graphrag-baseline=history:feature", branch="main"
    )
    assert report["comparison"]["baseline"]["path"].startswith("history:feature (run 4, ")
    empty = tmp_path / "empty.sqlite"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLE),
            "-p",
            "no:cacheprovider",
            "-q",
            f"--graphrag-history={empty}",
            "--graphrag-baseline=history:last",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 4, output[-2000:]
    assert "--graphrag-baseline history:last: history" in output and "no run 'last'" in output
    assert "Traceback" not in output


def test_the_history_view_in_headless_chromium(nights: dict[str, Any]) -> None:
    """The real run's HTML: trend charts, change marks, flaky strips and a question's last runs, offline."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (install Debian's package: apt-get install -y chromium)")
    page_file = nights["folder"] / "judged.html"
    url = page_file.resolve().as_uri()
    judged = nights["judged"]
    flaky = judged["history"]["flaky"]
    blocked: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.split("#")[0] == url
                    else (blocked.append(route.request.url), route.abort())
                ),
            )
            page = context.new_page()
            page.on(
                "console", lambda message: errors.append(message.text) if message.type == "error" else None
            )
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.wait_for_selector("html[data-ready]")
            page.locator('a[data-tab="history"]').click()
            history = page.locator("#history")
            sync_api.expect(history).to_be_visible()
            charts = history.locator('[data-testid="trend-chart"]')
            assert charts.evaluate_all("nodes => nodes.map(node => node.dataset.target)") == [
                "micro:steps_score.mean",
                "micro:answer_f1.mean",
            ]
            first = charts.first
            assert first.locator("circle.point").count() == 4
            values = first.locator("circle.point").evaluate_all(
                "nodes => nodes.map(n => Number(n.dataset.value))"
            )
            assert values[-1] == pytest.approx(judged["aggregates"]["micro"]["steps_score"]["mean"])
            assert first.locator('[data-testid="trend-fit"]').count() == 1
            box = first.locator("svg").bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 60
            rows = history.locator('[data-testid="flaky-questions"] tbody tr')
            assert rows.evaluate_all("rows => rows.map(row => row.dataset.question)") == [
                entry["question_id"] for entry in flaky
            ]
            strip = rows.first.locator("svg.ostrip")
            assert strip.get_attribute("data-outcomes") == " ".join(flaky[0]["outcomes"])
            assert strip.locator("rect").evaluate_all("nodes => nodes.map(n => n.getAttribute('class'))") == [
                f"o-{outcome}" for outcome in flaky[0]["outcomes"]
            ]
            rows.first.locator("a").click()
            shown = page.locator('[data-testid="history-strip"]')
            shown.wait_for()
            assert shown.get_attribute("data-outcomes") == " ".join(flaky[0]["outcomes"])
            assert "last runs (flaky)" in page.locator("#detail").inner_text().lower()
            page.locator("#f-flaky").check()
            sync_api.expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(flaky)} of"))
        finally:
            browser.close()
    assert blocked == [] and errors == []


def test_a_sharded_run_merged_with_the_history(
    nights: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shards compared with history:last; the merge reads that run and the earlier runs from the history."""
    history = tmp_path / "history.sqlite"
    history.write_bytes(nights["history"].read_bytes())
    shards_history = tmp_path / "shards.sqlite"  # what the shards record themselves stays apart
    shards_history.write_bytes(nights["history"].read_bytes())
    shard_reports = [
        run(
            tmp_path,
            f"shard{index}",
            shards_history,
            GOOD,
            f"--graphrag-shard={index}/2",
            "--graphrag-baseline=history:last",
            "--graphrag-gate=history:passes>=5/5",
            "-o",
            "graphrag_gates=",
            live=True,
        )[0]
        for index in (1, 2)
    ]
    assert all("history" not in report and report["gates"] == [] for report in shard_reports)
    merged_path = tmp_path / "merged.json"
    shards = [str(tmp_path / f"shard{index}.json") for index in (1, 2)]
    status = merge_main([*shards, "--report", str(merged_path), "--history", str(history)])
    output = capsys.readouterr().out
    merged = json.loads(merged_path.read_text(encoding="utf-8"))
    assert merged["comparison"]["baseline"]["path"].startswith("history:last (run 5, ")
    good, bad = outcomes(nights["recorded"][0]), outcomes(nights["recorded"][1])
    flipping = [question for question in good if good[question] != bad[question]]
    assert [entry["question_id"] for entry in merged["history"]["flaky"]] == flipping
    [kofn] = merged["gates"]
    assert kofn["expression"] == "history:micro:passes>=5/5" and not kofn["passed"]
    assert status == 1 and "gate FAILED: history:micro:passes" in output
    without = merge_main([*shards, "--report", str(tmp_path / "again.json")])
    assert without == 2
    assert "the baseline history:last is a run of the history: pass --history URL" in capsys.readouterr().err


def test_repeats_k_of_n_over_a_replay_with_five_attempts(tmp_path: Path) -> None:
    """Five recorded attempts per question, the third from the regression recording: 4 of 5 pass."""
    good = [json.loads(line) for line in GOOD.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = {
        record["question_id"]: record
        for record in (json.loads(line) for line in REGRESSION.read_text(encoding="utf-8").splitlines())
    }
    attempts = tmp_path / "attempts.jsonl"
    attempts.write_text(
        "".join(
            json.dumps({**(bad[record["question_id"]] if number == 3 else record), "attempt": number}) + "\n"
            for record in good
            for number in range(1, 6)
        ),
        encoding="utf-8",
    )
    report = tmp_path / "repeats.json"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(EXAMPLE),
            "-p",
            "no:cacheprovider",
            "-q",
            "--graphrag-report",
            str(report),
            "--graphrag-responses",
            str(attempts),
            "--graphrag-agent-repeats=5",
            "--graphrag-repeat-policy=majority",
            "--graphrag-gate=repeats:passes>=4/5",
            "--graphrag-gate=repeats:passes>=5/5",
            "-o",
            "graphrag_gates=",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert report.exists(), (completed.stdout + completed.stderr)[-3000:]
    results = json.loads(report.read_text(encoding="utf-8"))
    split = [result["question_id"] for result in results["results"] if 0 < result["agent_passes"] < 5]
    assert split, "the regression recording breaks some questions"
    four, five = results["gates"]
    assert four["expression"] == "repeats:micro:passes>=4/5" and four["passed"] and four["actual"] == 0
    assert not five["passed"] and five["actual"] == len(split)
    judged = [result for result in results["results"] if result["outcome"] != "xfailed"]  # xfail: not held
    assert len(judged) == len(results["results"]) - 1
    assert f"{len(split)} of {len(judged)} question(s) passed fewer than 5 of their last 5" in five["message"]
