"""graphrag-eval-history: each subcommand's text and JSON, and the same answers from SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from history_support import run_report, without_times

from pytest_graphrag_eval.commands.history import main
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.report_model import ReportDocument
from pytest_graphrag_eval.run.pipeline import OutputPaths, write_outputs

# Eight nightly runs: q00001 flips, q00005 breaks for good at run 6, the graph changes at run 4.
FAILING = [["q00001"], [], ["q00001"], [], ["q00001"], [], ["q00005"], ["q00001", "q00005"]]


def record_nights(url: str) -> None:
    with open_history(url) as store:
        for night, ids in enumerate(FAILING):
            store.record_run(
                run_report(night, failing=ids, graph="g1" if night < 4 else "g2"),
                run_key=f"nightly-{night}",
                provenance=RunProvenance(
                    commit=hashlib.sha1(b"%d" % (night // 2)).hexdigest(), branch="main"
                ),
            )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def recorded(history_url: str) -> str:
    record_nights(history_url)
    return history_url


def test_list_shows_runs_newest_first(recorded: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, recorded, "list", "--limit", "3")
    lines = out.splitlines()
    assert status == 0
    assert lines[0].split()[:3] == ["run", "started", "(UTC)"]
    assert [line.split()[-1] for line in lines[1:]] == ["nightly-7", "nightly-6", "nightly-5"]
    assert "FAILED" in lines[1] and "passed" in lines[3]
    assert all(len(line) <= 100 for line in lines)
    status, out, _ = cli(capsys, recorded, "list", "--json", "--branch", "main")
    runs = json.loads(out)
    assert [run["run_key"] for run in runs][:2] == ["nightly-7", "nightly-6"]
    assert runs[0]["failed"] == 2 and runs[0]["micro_means"]["steps_score"] == pytest.approx(10 / 12)


def test_flaky_names_the_flipping_question_not_the_broken_one(
    recorded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(capsys, recorded, "flaky", "--last", "8", "--min-flips", "3")
    assert status == 0
    assert "1 flaky question(s) over the last 8 run(s): flipped >= 3 times" in out
    (line,) = [line for line in out.splitlines() if "q00001" in line]
    assert "5 flips" in line and "FPFPFPPF" in line  # not the flip that came with the new graph
    assert "q00005" not in out  # failed twice in a row: broken, not flaky
    data = json.loads(cli(capsys, recorded, "flaky", "--json", "--min-flips", "3")[1])
    assert [item["question_id"] for item in data["flaky"]] == ["q00001"]
    same_commit = json.loads(cli(capsys, recorded, "flaky", "--json", "--min-flips", "99")[1])
    # passed and failed on one commit (nights 0-1, 2-3, 4-5 and 6-7 share one): flaky without the flips
    assert [item["question_id"] for item in same_commit["flaky"]] == ["q00001"]
    assert len(same_commit["flaky"][0]["mixed_commits"]) == 4


def test_trend_marks_the_graph_change_and_gives_the_slope(
    recorded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(capsys, recorded, "trend", "steps_score.mean", "--last", "8")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("steps_score.mean over the last 8 run(s), oldest first")
    assert lines[6].endswith("<- graph")  # night 4: release 2 of the graph
    assert lines[-1].startswith("slope: ") and "95% interval" in lines[-1]
    data = json.loads(cli(capsys, recorded, "trend", "pass_rate", "--json")[1])
    assert [point["value"] for point in data["points"]][-2:] == pytest.approx([11 / 12, 10 / 12])
    assert [point["changed"] for point in data["points"]][3:6] == [[], ["graph"], []]


def test_show_and_compare_explain_a_run(recorded: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, recorded, "show", "last")
    assert status == 0
    assert out.startswith("run 8 (nightly-7): FAILED")
    assert "why:        2 question(s) failed" in out
    assert "FAILED q00001: steps_score = 0, required >= 1" in out
    status, out, _ = cli(capsys, recorded, "compare", "nightly-5", "nightly-7")
    assert "2 regressed, 0 fixed, 0 new, 0 removed" in out
    assert "REGRESSED q00001" in out and "REGRESSED q00005" in out
    data = json.loads(cli(capsys, recorded, "compare", "nightly-0", "nightly-5", "--json")[1])
    assert data["fixed"] == ["q00001"] and data["changed"]["graph"] is True


def test_report_regenerates_a_past_runs_outputs(
    recorded: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {name: tmp_path / f"r.{name}" for name in ("json", "html", "md")}
    status, out, _ = cli(
        capsys, recorded, "report", "nightly-2",
        "--report", str(paths["json"]), "--html", str(paths["html"]), "--markdown", str(paths["md"]),
    )  # fmt: skip
    assert status == 0 and out.count("wrote the") == 3
    original = run_report(2, failing=["q00001"], graph="g1")
    assert json.loads(paths["json"].read_text()) == original
    # exactly the files the run itself wrote from its report
    written = write_outputs(
        ReportDocument.from_json(original, "run report"),
        OutputPaths(tmp_path / "o.json", tmp_path / "o.md", tmp_path / "o.html"),
    )
    assert not written.problems
    for name in ("json", "html", "md"):
        assert paths[name].read_bytes() == (tmp_path / f"o.{name}").read_bytes()
    status, _, err = cli(capsys, recorded, "report", "nightly-2")
    assert status == 2 and "give at least one of --report, --html, --markdown" in err


def test_import_backfills_reports_once(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = []
    for night in range(3):
        path = tmp_path / f"night-{night}.json"
        path.write_text(json.dumps(run_report(night, failing=["q00002"] if night == 1 else [])))
        files.append(str(path))
    status, out, _ = cli(capsys, history_url, "import", *files, "--branch", "main", "--commit", "abc")
    assert status == 0 and out.count("imported") == 3
    shard = tmp_path / "shard.json"
    shard.write_text(json.dumps(run_report(9, shard=(1, 2))))
    status, out, _ = cli(capsys, history_url, "import", str(shard), "--run-key", "sharded")
    assert out.startswith("imported shard 1 of 2 of run sharded")
    assert cli(capsys, history_url, "list")[1].startswith("waiting: run sharded has 1 of its 2 shards")
    runs = json.loads(cli(capsys, history_url, "list", "--json")[1])
    assert [(run["branch"], run["commit"], run["failed"]) for run in runs] == [
        ("main", "abc", 0),
        ("main", "abc", 1),
        ("main", "abc", 0),
    ]
    status, _, err = cli(capsys, history_url, "import", files[1])
    assert status == 2 and "is already recorded" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    status, _, err = cli(capsys, history_url, "import", str(bad))
    assert status == 2 and "bad.json: not a JSON report" in err


def test_a_missing_sqlite_history_is_not_created_by_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cli(capsys, str(tmp_path / "none.db"), "list")
    assert status == 2 and "none.db: no such file" in err
    assert not (tmp_path / "none.db").exists()


def test_a_bad_metric_name_is_a_usage_error(recorded: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, recorded, "trend", "micro:steps_score.average")
    assert status == 2 and "metric 'micro:steps_score.average': expected" in err
    status, out, err = cli(capsys, recorded, "trend", "answer_relevance.mean")
    assert status == 2 and out == ""
    assert "no run of the last 8 has the metric 'answer_relevance.mean' (the last run has: answer_f1," in err


SUBCOMMANDS = [
    ("list",),
    ("show", "nightly-7"),
    ("flaky", "--last", "8"),
    ("trend", "steps_score.mean"),
    ("trend", "template[template_001_ENTITY]:steps_score"),
    ("compare", "nightly-0", "nightly-7"),
]


def test_sqlite_and_postgresql_give_the_same_answers(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sqlite_url = str(tmp_path / "history.db")
    record_nights(sqlite_url)
    record_nights(postgres_url)
    for args in SUBCOMMANDS:
        text = [cli(capsys, url, *args)[1] for url in (sqlite_url, postgres_url)]
        assert text[0] == text[1], args
        data = [
            without_times(json.loads(cli(capsys, url, *args, "--json")[1]))
            for url in (sqlite_url, postgres_url)
        ]
        assert data[0] == data[1], args
    outputs = []
    for name, url in (("sqlite", sqlite_url), ("pg", postgres_url)):
        folder = tmp_path / name
        files = ("--report", folder / "r.json", "--html", folder / "r.html", "--markdown", folder / "r.md")
        cli(capsys, url, "report", "nightly-4", *map(str, files))
        outputs.append([(folder / file).read_bytes() for file in ("r.json", "r.html", "r.md")])
    assert outputs[0] == outputs[1]


def test_import_names_a_metric_no_float_holds(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_report(0)
    report["results"][1]["answer_f1"] = 10**400  # JSON reads any run of digits as an integer
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(report))
    status, _, err = cli(capsys, history_url, "import", str(path))
    question = report["results"][1]["question_id"]
    assert (
        status == 2
        and f"huge.json: results[1] (question '{question}'): field 'answer_f1' is an integer" in err
    )
    assert "beyond a float's range" in err
    assert "Traceback" not in err


def _shard_report(**shard: object) -> dict[str, object]:
    report = run_report(0, shard=(1, 2))
    report["metadata"]["shard"].update(shard)
    return report


def _with_metadata(**fields: object) -> dict[str, object]:
    report = run_report(0)
    report["metadata"].update(fields)
    return report


@pytest.mark.parametrize(
    ("report", "message"),
    [
        (_shard_report(index=float("inf")), "got index inf, count 2"),
        (_shard_report(count=10**30), "got index 1, count 10000000000000000000"),
        (_shard_report(index=1.7), "got index 1.7, count 2"),
        (_shard_report(index=5), "got index 5, count 2"),
        (_shard_report(index="1"), "got index '1', count 2"),
        (_with_metadata(started_at="yesterday"), "field 'metadata.started_at' must be an ISO 8601 date-time"),
        (_with_metadata(settings=5), "field 'metadata.settings' is not an object"),
    ],
    ids=[
        "infinite-index",
        "huge-count",
        "fractional-index",
        "index-beyond-count",
        "text-index",
        "no-date",
        "settings-not-an-object",
    ],
)
def test_import_refuses_a_shard_or_start_time_it_cannot_order(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], report: object, message: str
) -> None:
    """An infinite index or a count beyond SQLite's integers raised OverflowError; a fractional, text or
    too large index was recorded as some other shard; a start time that is no date sorted as the newest
    run forever (the baseline `last`, never pruned by date); settings that are no object failed an assert."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(report))
    status, _, err = cli(capsys, history_url, "import", str(path))
    assert status == 2 and f"{path}: field 'metadata." in err and message in err, err
    assert cli(capsys, history_url, "list")[1].startswith("no runs in")


def test_a_start_time_with_an_offset_is_ordered_in_utc(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs are ordered by their start time's text, so 09:00+05:00 (04:00 UTC) sorted after 05:00Z."""
    for name, started_at in (("east", "2026-01-01T09:00:00+05:00"), ("utc", "2026-01-01T05:00:00Z")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(_with_metadata(started_at=started_at)))
        assert cli(capsys, history_url, "import", str(path), "--run-key", name)[0] == 0
    out = cli(capsys, history_url, "list", "--json")[1]
    assert [(run["run_key"], run["started_at"]) for run in json.loads(out)] == [
        ("utc", "2026-01-01T05:00:00Z"),
        ("east", "2026-01-01T04:00:00Z"),
    ]


def test_a_report_given_twice_is_imported_once_and_its_reimport_refused(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Given twice, a report was keyed by the hash of both copies: the key of a later import of the same
    file alone differed, so the same run was recorded a second time without a word."""
    path = tmp_path / "night.json"
    path.write_text(json.dumps(run_report(0)))
    status, out, _ = cli(capsys, history_url, "import", str(path), str(tmp_path / "." / "night.json"))
    assert status == 0 and out.count("imported run") == 1
    status, _, err = cli(capsys, history_url, "import", str(path))
    assert status == 2 and "is already recorded" in err
    assert len(json.loads(cli(capsys, history_url, "list", "--json")[1])) == 1


def test_a_duration_no_float_holds_is_recorded_as_unknown(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """float(10**400) raised OverflowError out of the import."""
    path = tmp_path / "long.json"
    path.write_text(json.dumps(_with_metadata(duration_sec=10**400)))
    assert cli(capsys, history_url, "import", str(path))[0] == 0
    assert json.loads(cli(capsys, history_url, "list", "--json")[1])[0]["duration_sec"] is None


def test_a_report_nested_too_deeply_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    status, _, err = cli(capsys, str(tmp_path / "history.db"), "import", str(path))
    assert (
        status == 2 and err == f"graphrag-eval-history: error: {path}: not a JSON report: nested too deeply\n"
    )


def _with_aggregates(change: str) -> dict[str, Any]:
    report = run_report(0)
    if change == "huge-mean":
        report["aggregates"]["micro"]["steps_score"]["mean"] = 10**400
    else:
        report["aggregates"] = {"micro": [1]} if change == "micro-a-list" else 5
    return report


@pytest.mark.parametrize("change", ["huge-mean", "micro-a-list", "not-an-object"])
def test_aggregates_of_another_shape_never_break_the_reading_commands(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    """Such a report was imported, and every later list, show and trend of the history raised
    OverflowError or AttributeError: one bad import broke the history for everyone."""
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(_with_aggregates(change)))
    status, _, err = cli(capsys, history_url, "import", str(path))
    if change == "huge-mean":  # a mean no float holds is read as no value
        assert status == 0
        assert (
            "steps_score" not in json.loads(cli(capsys, history_url, "list", "--json")[1])[0]["micro_means"]
        )
    else:
        assert status == 2 and f"{path}: field 'aggregates' must be an object of objects" in err
    for command in (["list"], ["show", "last"], ["trend", "answer_f1.mean"]):
        assert cli(capsys, history_url, *command)[0] in (0, 2)


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (
            ["--report", "same.out", "--markdown", "same.out"],
            "--report and --markdown name one file, same.out: give each its own",
        ),
        (["--report", "."], "--report .: is a folder; give a file name"),
    ],
    ids=["two-outputs-one-file", "a-folder"],
)
def test_report_refuses_outputs_it_cannot_all_write(
    recorded: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    outputs: list[str], message: str,
) -> None:  # fmt: skip
    """The Markdown summary was written over the JSON report without a word; a folder raised ValueError."""
    monkeypatch.chdir(tmp_path)
    status, _, err = cli(capsys, recorded, "report", "last", *outputs)
    assert status == 2 and message in err and not (tmp_path / "same.out").exists()
