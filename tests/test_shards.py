"""Shards (`--graphrag-shard K/N`, pytest-split) and `graphrag-eval-merge`.

The merged report of N shard runs must be the report of one unsharded run, field by
field (timings aside): results, aggregates, gates, the baseline comparison, and the
Markdown and HTML written from them. Every run is a real pytest process replaying
recorded responses; the merge runs through its console script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from report_equality import report_differences, without_timings
from synthetic_corpus import write_synthetic_project

from pytest_graphrag_eval.commands.merge import merge_main
from pytest_graphrag_eval.corpus.shards import assign_shards, parse_shard
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
MERGE_SCRIPT = Path(sys.executable).parent / "graphrag-eval-merge"
SYNTHETIC_OPTIONS = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-judge",
    "lexical",
    "--graphrag-threshold",
    "steps_score>=1",
    "--graphrag-threshold",
    "answer_f1>=0.8",
    "--graphrag-gate",
    "steps_score.mean>=0.9",
    "--graphrag-gate",
    "template[*]:answer_f1.mean>=0.85",
]


def run_pytest(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False, env=env)


def run_merge(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # its output block-buffered, as a CI job's usually is: the command flushes it before it ends
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [str(MERGE_SCRIPT), *args], cwd=folder, capture_output=True, text=True, check=False, env=environment
    )


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def assert_same_outputs(folder: Path, expected: str, actual: str) -> None:
    """The JSON reports field by field, the Markdown and HTML as text, timings aside."""
    assert (
        report_differences(read_json(folder / f"{expected}.json"), read_json(folder / f"{actual}.json")) == []
    )
    for suffix in ("md", "html"):
        one = (folder / f"{expected}.{suffix}").read_text(encoding="utf-8")
        other = (folder / f"{actual}.{suffix}").read_text(encoding="utf-8")
        assert without_timings(one) == without_timings(other), suffix


def outputs(name: str | Path, prefix: str = "--graphrag-") -> list[str]:
    """The JSON, Markdown and HTML outputs `name.json`, `name.md`, `name.html` (pytest's or the merge's)."""
    return [
        f"{prefix}report",
        f"{name}.json",
        f"{prefix}markdown",
        f"{name}.md",
        f"{prefix}html",
        f"{name}.html",
    ]


def merge_outputs(name: str | Path) -> list[str]:
    return outputs(name, prefix="--")


def synthetic_baseline(folder: Path, count: int, *extra: str) -> None:
    write_synthetic_project(folder, count, per_template=40)
    run = run_pytest(
        folder, *SYNTHETIC_OPTIONS, "--graphrag-responses", "baseline_responses.jsonl",
        "--graphrag-report", "baseline.json", *extra,
    )  # fmt: skip
    assert (folder / "baseline.json").is_file(), run.stdout[-2000:]


# --- the shard spec and the selection ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("4/3", "shard number must be from 1 to 3"),
        ("0/2", "shard number must be from 1 to 2"),
        ("abc", "must be K/N"),
        ("1/0", "number of shards must be from 1"),
        ("2/3/4", "must be K/N"),
    ],
)
def test_a_bad_shard_spec_is_refused_with_its_text(text: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match="--graphrag-shard") as error:
        parse_shard(text)
    assert says in str(error.value) and text in str(error.value)


def test_a_bad_shard_spec_is_a_usage_error_before_any_question_runs(tmp_path: Path) -> None:
    write_synthetic_project(tmp_path, 20)
    run = run_pytest(
        tmp_path, *SYNTHETIC_OPTIONS, "--graphrag-responses", "responses.jsonl", "--graphrag-shard", "4/3"
    )
    assert run.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--graphrag-shard 4/3: the shard number must be from 1 to 3" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_shards_are_balanced_by_template_and_cover_every_question_once() -> None:
    templates = [
        (f"t{number}", [f"t{number}-q{index}" for index in range(7 + number)]) for number in range(12)
    ]
    shards = assign_shards(templates, 3)
    assert sorted(shards) == sorted(question for _, questions in templates for question in questions)
    for _, questions in templates:
        sizes = [sum(1 for question in questions if shards[question] == shard) for shard in (1, 2, 3)]
        assert max(sizes) - min(sizes) <= 1, sizes
    totals = [list(shards.values()).count(shard) for shard in (1, 2, 3)]
    assert max(totals) - min(totals) <= 4, totals


def test_adding_a_question_moves_few_others() -> None:
    questions = [f"q{index:04d}" for index in range(500)]
    before = assign_shards([("t", questions)], 4)
    for added in ("new-a", "q9999", "zzz"):
        after = assign_shards([("t", [*questions, added])], 4)
        moved = [question for question in questions if before[question] != after[question]]
        assert len(moved) <= 3, moved  # at most N - 1: one per block boundary
    other = assign_shards([("t", questions), ("u", ["u1", "u2"])], 4)
    assert all(other[question] == before[question] for question in questions)  # other templates: none


def test_small_templates_spread_over_every_shard() -> None:
    shards = assign_shards([(f"template-{number}", [f"q{number}"]) for number in range(60)], 3)
    assert sorted(set(shards.values())) == [1, 2, 3]


# --- merge equality ------------------------------------------------------------------------------------


def test_example_project_in_three_shards_merges_into_the_unsharded_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example project replaying the regressed recording against the recorded run as baseline.

    The command ends its process at once when done (`cli.merge_command`): with the status and every
    line that `merge_main`, the function, returns and prints."""
    baseline = tmp_path / "baseline.json"
    run_pytest(
        ROOT, "example_project", "--graphrag-responses", "example_project/recordings/responses.jsonl",
        "--graphrag-report", str(baseline), "--graphrag-html", str(tmp_path / "ignored.html"),
    )  # fmt: skip
    common = [
        "example_project", "--graphrag-responses", "example_project/recordings/regression.jsonl",
        "--graphrag-baseline", str(baseline), "--graphrag-gate", "regressions<=0",
        "--graphrag-gate", "delta:answer_f1.mean>=-0.02",
    ]  # fmt: skip
    whole = run_pytest(ROOT, *common, *outputs(tmp_path / "whole"))
    assert whole.returncode == 1  # the recording regressed: failed questions and a failed gate
    shard_paths = []
    for index in (1, 2, 3):
        name = str(tmp_path / f"shard-{index}")
        shard = run_pytest(
            ROOT, *common, "--graphrag-shard", f"{index}/3", "--graphrag-report", f"{name}.json"
        )
        assert "gates and the baseline comparison are decided on the whole run" in shard.stdout
        shard_report = read_json(Path(f"{name}.json"))
        assert shard_report["gates"] == [] and "comparison" not in shard_report
        assert shard_report["metadata"]["shard"] == {
            "index": index,
            "count": 3,
            "selected_by": "--graphrag-shard",
        }
        shard_paths.append(f"{name}.json")
    merged = run_merge(tmp_path, *shard_paths, *merge_outputs("merged"))
    assert merged.returncode == 1, merged.stderr
    questions = len(read_json(tmp_path / "whole.json")["results"])
    assert f"{questions} questions" in merged.stdout and "gate FAILED: micro:regressions" in merged.stdout
    assert_same_outputs(tmp_path, "whole", "merged")
    report = read_json(tmp_path / "merged.json")
    assert report["comparison"]["regressions"] and any(not gate["passed"] for gate in report["gates"])
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    status = merge_main([*shard_paths, *merge_outputs("merged")])
    printed = capsys.readouterr()
    assert (status, printed.out, printed.err) == (merged.returncode, merged.stdout, merged.stderr)
    assert merged.stdout.rstrip().endswith("wrote the HTML report: merged.html")


def test_judged_shards_merge_into_the_unsharded_report_and_judge_spend(tmp_path: Path) -> None:
    """An LLM judge on the loopback server: the merged `judge_spend` sums the shards' calls, tokens, cost."""
    write_synthetic_project(tmp_path, 60, per_template=20)
    verdict = {"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 1}
    with FakeOpenAIServer(chat_text=json.dumps({**verdict, "reason": "scripted"})) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-shards"}
        common = [
            "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
            "--graphrag-judge", "llm", "--graphrag-no-cache", "--graphrag-threshold", "answer_f1>=0.5",
        ]  # fmt: skip
        whole_run = run_pytest(tmp_path, *common, *outputs("whole"), env=env)
        for index in (1, 2, 3):
            run_pytest(tmp_path, *common, "--graphrag-shard", f"{index}/3", "--graphrag-report",
                       f"shard-{index}.json", env=env)  # fmt: skip
        sent = server.count("chat")
    whole = read_json(tmp_path / "whole.json")["judge_spend"]
    assert sent == 2 * whole["requests"] > 0, "each judged question once unsharded and once in its shard"
    shards = [read_json(tmp_path / f"shard-{index}.json")["judge_spend"] for index in (1, 2, 3)]
    assert all(spend["requests"] > 0 for spend in shards)
    merged = run_merge(tmp_path, "shard-2.json", "shard-3.json", "shard-1.json", *merge_outputs("merged"))
    assert merged.returncode == whole_run.returncode == 1, merged.stderr  # answer_f1>=0.5 fails some
    spend = read_json(tmp_path / "merged.json")["judge_spend"]
    assert spend["requests"] == sum(shard["requests"] for shard in shards) == whole["requests"]
    assert spend["input_tokens"] == sum(shard["input_tokens"] for shard in shards)
    assert_same_outputs(tmp_path, "whole", "merged")


@pytest.mark.slow
def test_ten_thousand_questions_in_three_shards_merge_into_the_unsharded_report(tmp_path: Path) -> None:
    """A generated 10,000-question corpus: 3 shard runs and one -n 2 run, compared field by field."""
    synthetic_baseline(tmp_path, 10_000, "-n", "2")
    common = [
        *SYNTHETIC_OPTIONS,
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-baseline",
        "baseline.json",
    ]
    common += ["--graphrag-gate", "regressions<=0"]
    run_pytest(tmp_path, *common, "-n", "2", *outputs("whole"))
    for index, workers in ((1, "0"), (2, "2"), (3, "0")):  # a shard may use xdist too
        shard = ["--graphrag-shard", f"{index}/3", "-n", workers, "--graphrag-report", f"shard-{index}.json"]
        run_pytest(tmp_path, *common, *shard)
    sizes = [len(read_json(tmp_path / f"shard-{index}.json")["results"]) for index in (1, 2, 3)]
    assert sum(sizes) == 10_000 and max(sizes) - min(sizes) <= 250, sizes
    merged = run_merge(tmp_path, "shard-3.json", "shard-1.json", "shard-2.json", *merge_outputs("merged"))
    assert merged.returncode == 1 and "10000 questions" in merged.stdout, merged.stderr
    assert_same_outputs(tmp_path, "whole", "merged")


def test_pytest_split_groups_merge_into_the_unsharded_report(tmp_path: Path) -> None:
    """pytest-split deselects the items; its groups are recorded as shards and merge the same."""
    synthetic_baseline(tmp_path, 120)
    common = [
        *SYNTHETIC_OPTIONS,
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-baseline",
        "baseline.json",
    ]
    run_pytest(tmp_path, *common, *outputs("whole"))
    for group in (1, 2):
        run_pytest(
            tmp_path,
            *common,
            "--splits",
            "2",
            "--group",
            str(group),
            "--graphrag-report",
            f"split-{group}.json",
        )
        metadata = read_json(tmp_path / f"split-{group}.json")["metadata"]
        assert metadata["shard"] == {"index": group, "count": 2, "selected_by": "pytest-split"}
    merged = run_merge(tmp_path, "split-1.json", "split-2.json", *merge_outputs("merged"))
    assert merged.returncode == 1, merged.stderr
    assert_same_outputs(tmp_path, "whole", "merged")


def test_reports_of_a_deselection_that_partition_the_corpus_merge(tmp_path: Path) -> None:
    """Any tool that deselects items: two `-k` runs that split the corpus between them, no shard option."""
    synthetic_baseline(tmp_path, 80)
    common = [*SYNTHETIC_OPTIONS, "--graphrag-responses", "responses.jsonl"]
    run_pytest(tmp_path, *common, *outputs("whole"))
    run_pytest(tmp_path, *common, "-k", "t0000", "--graphrag-report", "part-a.json")
    run_pytest(tmp_path, *common, "-k", "not t0000", "--graphrag-report", "part-b.json")
    assert "corpus_positions" in read_json(tmp_path / "part-b.json")["metadata"]
    merged = run_merge(tmp_path, "part-b.json", "part-a.json", *merge_outputs("merged"))
    assert merged.returncode == 1, merged.stderr
    assert_same_outputs(tmp_path, "whole", "merged")


# --- bad input -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shard_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three shards of a 60-question corpus, one shard of another corpus, one with another threshold."""
    folder = tmp_path_factory.mktemp("shards")
    write_synthetic_project(folder, 60, per_template=20)
    common = [*SYNTHETIC_OPTIONS, "--graphrag-responses", "responses.jsonl"]
    for index in (1, 2, 3):
        run_pytest(
            folder, *common, "--graphrag-shard", f"{index}/3", "--graphrag-report", f"shard-{index}.json"
        )
    run_pytest(folder, *common, "--graphrag-shard", "2/3", "--graphrag-threshold", "answer_f1>=0.5",
               "--graphrag-report", "other-settings.json")  # fmt: skip
    run_pytest(folder, *common, "--graphrag-shard", "2/4", "--graphrag-report", "other-split.json")
    other = folder / "other"
    write_synthetic_project(other, 61, per_template=20)
    # Outside the project, so written with '=' (plugin/detached_paths.py).
    run_pytest(other, *common, "--graphrag-shard", "2/3", "--graphrag-report=../other-corpus.json")
    return folder


def merge_error(folder: Path, capsys: pytest.CaptureFixture[str], *reports: str) -> str:
    given = [
        report if report.startswith("-") else str(folder / report) for report in reports
    ]  # options as is
    status = merge_main([*given, "--report", str(folder / "out.json")])
    assert status == 2
    assert not (folder / "out.json").exists()  # nothing half-merged is written
    error = capsys.readouterr().err
    assert error.startswith("graphrag-eval-merge: error: ") and "Traceback" not in error
    return error


def test_merge_refuses_reports_of_two_corpora(
    shard_reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = merge_error(shard_reports, capsys, "shard-1.json", "other-corpus.json", "shard-3.json")
    assert "shard-1.json and " in error and "other-corpus.json were run on different corpora" in error
    assert "corpus_files[0]" in error


def test_merge_refuses_a_missing_shard(shard_reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = merge_error(shard_reports, capsys, "shard-1.json", "shard-3.json")
    assert "shard 2/3 is missing: got 2 of 3 shard reports" in error


def test_merge_refuses_a_duplicated_shard(shard_reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = merge_error(shard_reports, capsys, "shard-1.json", "shard-2.json", "shard-2.json", "shard-3.json")
    assert "shard 2/3 is given twice" in error


def test_merge_refuses_shards_run_with_other_settings(
    shard_reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = merge_error(shard_reports, capsys, "shard-1.json", "other-settings.json", "shard-3.json")
    assert "were run with different settings: settings.thresholds" in error


def test_merge_refuses_shards_of_two_splits(shard_reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = merge_error(shard_reports, capsys, "shard-1.json", "other-split.json", "shard-3.json")
    assert "different splits" in error and "is shard 2/4" in error


def test_merge_refuses_a_question_in_two_reports(
    shard_reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without shard numbers (a deselecting tool) an overlap is found by the questions themselves."""
    for name in ("shard-1.json", "shard-2.json"):
        report = read_json(shard_reports / name)
        del report["metadata"]["shard"]
        (shard_reports / f"unnumbered-{name}").write_text(json.dumps(report), encoding="utf-8")
    error = merge_error(
        shard_reports, capsys, "unnumbered-shard-1.json", "unnumbered-shard-2.json", "unnumbered-shard-1.json"
    )
    assert "is in two reports" in error and "unnumbered-shard-1.json" in error
    error = merge_error(shard_reports, capsys, "unnumbered-shard-1.json", "unnumbered-shard-2.json")
    assert "questions of the corpus are in no report" in error and "corpus.yaml: " in error


def test_merge_names_a_file_that_is_not_a_report(
    shard_reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shard_reports / "broken.json").write_text("{not json", encoding="utf-8")
    error = merge_error(shard_reports, capsys, "shard-1.json", "broken.json")
    assert "broken.json" in error and "not JSON" in error


@pytest.mark.parametrize("given_as", ["shard", "baseline"])
def test_merge_names_a_metric_beyond_a_float_s_range(
    shard_reports: Path, capsys: pytest.CaptureFixture[str], given_as: str
) -> None:
    """JSON reads any run of digits as an integer: one no float holds is refused where it is read."""
    report = read_json(shard_reports / "shard-2.json")
    report["results"][1]["answer_f1"] = 10**400
    (shard_reports / "huge.json").write_text(json.dumps(report), encoding="utf-8")
    shards = ["shard-1.json", "huge.json" if given_as == "shard" else "shard-2.json", "shard-3.json"]
    baseline = ["--baseline", str(shard_reports / "huge.json")] if given_as == "baseline" else []
    error = merge_error(shard_reports, capsys, *shards, *baseline)
    question = report["results"][1]["question_id"]
    assert "huge.json, template 't0000', " in error and f"question '{question}', field 'answer_f1'" in error
    assert "beyond a float's range" in error


def test_the_shard_selection_is_recorded_with_the_corpus_and_settings(shard_reports: Path) -> None:
    metadata = read_json(shard_reports / "shard-2.json")["metadata"]
    assert metadata["corpus_files"] == [
        {"file": "corpus.yaml", "sha256": metadata["corpus_files"][0]["sha256"], "questions": 60}
    ]
    assert metadata["settings"]["thresholds"] == [["steps_score>=1", "cli"], ["answer_f1>=0.8", "cli"]]
    assert ["template[*]:answer_f1.mean>=0.85", "cli"] in metadata["settings"]["gates"]
    corpus = yaml.safe_load((shard_reports / "corpus.yaml").read_text(encoding="utf-8"))
    assert len(metadata["corpus_positions"]["results"]) == len(
        read_json(shard_reports / "shard-2.json")["results"]
    )
    assert sum(len(template["questions"]) for template in corpus) == 60


# --- shard identity: by content, not by path (issue 30) ----------------------------------------------


def _three_shards(folder: Path, *extra: str) -> list[str]:
    names = []
    for index in (1, 2, 3):
        name = f"shard-{index}.json"
        run_pytest(
            folder, *SYNTHETIC_OPTIONS, "--graphrag-shard", f"{index}/3", "--graphrag-report", name, *extra
        )
        names.append(name)
    return names


def test_merge_refuses_shards_that_replayed_two_recordings_written_to_one_path(tmp_path: Path) -> None:
    write_synthetic_project(tmp_path, 60, per_template=20)
    recording = tmp_path / "responses.jsonl"
    first = run_pytest(tmp_path, *SYNTHETIC_OPTIONS, "--graphrag-responses", "responses.jsonl",
                       "--graphrag-shard", "1/3", "--graphrag-report", "shard-1.json")  # fmt: skip
    assert (tmp_path / "shard-1.json").is_file(), first.stdout[-2000:]
    recording.write_bytes((tmp_path / "baseline_responses.jsonl").read_bytes())  # another recording
    for index in (2, 3):
        run_pytest(tmp_path, *SYNTHETIC_OPTIONS, "--graphrag-responses", "responses.jsonl",
                   "--graphrag-shard", f"{index}/3", "--graphrag-report", f"shard-{index}.json")  # fmt: skip
    merged = run_merge(tmp_path, "shard-1.json", "shard-2.json", "shard-3.json", "--report", "merged.json")
    assert merged.returncode == 2 and not (tmp_path / "merged.json").exists()
    assert "settings.responses" in merged.stderr and "different recordings" in merged.stderr, merged.stderr


def test_good_shards_run_from_different_checkout_folders_merge(tmp_path: Path) -> None:
    """CI runners with different workspace paths: absolute responses and baseline paths differ."""
    shards = []
    for index, checkout in ((1, "runner-a"), (2, "runner-b"), (3, "runner-b")):
        folder = tmp_path / checkout
        if checkout == "runner-a" and not (folder / "corpus.yaml").exists():
            synthetic_baseline(folder, 60)
        elif not (folder / "corpus.yaml").exists():  # the same files, and the baseline as a CI artifact
            write_synthetic_project(folder, 60, per_template=40)
            (folder / "baseline.json").write_bytes((tmp_path / "runner-a" / "baseline.json").read_bytes())
        run = run_pytest(
            folder, *SYNTHETIC_OPTIONS, "--graphrag-responses", str(folder / "responses.jsonl"),
            f"--graphrag-baseline={folder / 'baseline.json'}", "--graphrag-shard", f"{index}/3",
            "--graphrag-report=" + str(tmp_path / f"shard-{index}.json"),  # outside the project: '='
        )  # fmt: skip
        assert (tmp_path / f"shard-{index}.json").is_file(), run.stdout[-2000:]
        shards.append(f"shard-{index}.json")
    merged = run_merge(tmp_path, *shards, "--report", "merged.json", "--baseline", "runner-a/baseline.json")
    assert merged.returncode in (0, 1), merged.stderr
    assert len(read_json(tmp_path / "merged.json")["results"]) == 60


def test_a_merge_error_names_a_shard_report_not_a_baseline(tmp_path: Path) -> None:
    (tmp_path / "shard-1.json").write_text("{not json", encoding="utf-8")
    merged = run_merge(tmp_path, "shard-1.json", "--report", "merged.json")
    assert merged.returncode == 2 and "shard report is not JSON" in merged.stderr, merged.stderr
    assert "baseline" not in merged.stderr
