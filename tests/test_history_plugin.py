"""--graphrag-history in a pytest run: the run is recorded at its end; a history that cannot be
written costs nothing but a line (and the run, only with --graphrag-history-required)."""

from __future__ import annotations

import json

import pytest
from oxigraph_server import free_port
from plugin_support import (
    REPLAY_WITH_THRESHOLD,
    good_responses,
    write_project_where_q3_fails,
    write_responses,
)
from postgres_server import PostgresServer

from pytest_graphrag_eval.history.schema import LATEST_VERSION
from pytest_graphrag_eval.history.store import open_history

REPLAY = REPLAY_WITH_THRESHOLD


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    return write_project_where_q3_fails(pytester)


def _reports_written(project: pytest.Pytester) -> dict:
    return json.loads((project.path / "out" / "report.json").read_text(encoding="utf-8"))


def test_the_run_is_recorded_with_its_report(project: pytest.Pytester, history_url: str) -> None:
    result = project.runpytest(
        *REPLAY, "--graphrag-report", "out/report.json", f"--graphrag-history={history_url}"
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["graphrag-eval: history: recorded run 1 (*) in *"])
    with open_history(history_url) as store:
        (run,) = store.runs()
        assert (run.questions, run.failed, run.passed) == (3, 1, False)
        assert store.load_report("last") == _reports_written(project)
        assert store.question_outcomes(last_n=5).strips == {"q1": "P", "q2": "P", "q3": "F"}


def test_an_ini_history_path_is_relative_to_the_ini_file(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ngraphrag_history = history/runs.db\n")
    project.mkdir("sub")
    result = project.runpytest(*REPLAY, "--graphrag-history-run-key", "first")
    result.stdout.fnmatch_lines(["graphrag-eval: history: recorded run 1 (first) in *runs.db"])
    with open_history(str(project.path / "history" / "runs.db")) as store:
        assert [run.run_key for run in store.runs()] == ["first"]


def test_the_run_key_and_ci_provenance_are_recorded(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    for name, value in {
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": "feedc0de" * 5,
        "CI_COMMIT_REF_NAME": "release-2",
        "CI_PIPELINE_URL": "https://gitlab.example/p/-/pipelines/5",
        "CI_PIPELINE_ID": "5",
    }.items():
        monkeypatch.setenv(name, value)
    url = str(tmp_path / "h.db")
    project.runpytest(*REPLAY, f"--graphrag-history={url}", "--graphrag-history-run-key", "nightly-5")
    with open_history(url) as store:
        run = store.resolve("nightly-5")
        assert (run.commit, run.branch, run.ci, run.ci_url) == (
            "feedc0de" * 5,
            "release-2",
            "gitlab",
            "https://gitlab.example/p/-/pipelines/5",
        )


def _unwritable_history(project: pytest.Pytester, url: str, *extra: str) -> pytest.RunResult:
    result = project.runpytest(
        *REPLAY, "--graphrag-report", "out/report.json", f"--graphrag-history={url}", *extra
    )
    report = _reports_written(project)  # the run still scored and wrote its report
    assert [r["question_id"] for r in report["results"]] == ["q1", "q2", "q3"]
    (project.path / "out" / "report.json").unlink()
    return result


def test_a_wrong_postgresql_password_loses_nothing_and_is_never_shown(
    project: pytest.Pytester, postgres_server: PostgresServer
) -> None:
    url = postgres_server.url(password="wrong-Secret-4242")
    result = _unwritable_history(project, url)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["graphrag-eval: the run was NOT recorded in the history: history postgresql://graphrag:***@127.0.0.1:*"
         "password authentication failed*"]
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert "wrong-Secret-4242" not in output
    assert postgres_server.password not in output


def test_a_password_from_the_environment_is_used_and_not_shown(
    project: pytest.Pytester, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = postgres_server.create_database("history_from_env")
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    url = postgres_server.url("history_from_env", with_password=False)
    assert database.replace(f":{postgres_server.password}", "") == url
    result = project.runpytest(*REPLAY, f"--graphrag-history={url}")
    result.stdout.fnmatch_lines(
        ["graphrag-eval: history: recorded run 1 (*) in postgresql://graphrag@127.0.0.1:*"]
    )
    assert postgres_server.password not in result.stdout.str() + result.stderr.str()


def test_an_unreachable_server_fails_the_run_only_when_asked(project: pytest.Pytester) -> None:
    url = f"postgresql://graphrag:pw@127.0.0.1:{free_port()}/history"
    result = _unwritable_history(project, url)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*the run was NOT recorded in the history: history postgresql://graphrag:***@*"]
    )
    # a run whose questions all pass stays green unless the history is required
    write_responses(project, good_responses())
    assert _unwritable_history(project, url).ret == 0
    assert _unwritable_history(project, url, "--graphrag-history-required").ret == 1


def test_a_corrupt_sqlite_file_is_left_alone(project: pytest.Pytester) -> None:
    damaged = project.path / "history.db"
    damaged.write_bytes(b"this was never an SQLite database\n" * 100)
    result = _unwritable_history(project, str(damaged))
    result.stdout.fnmatch_lines(
        ["*NOT recorded in the history: history *history.db: not a readable SQLite history*"]
    )
    assert damaged.read_bytes() == b"this was never an SQLite database\n" * 100


def test_a_store_from_a_newer_version_is_refused(project: pytest.Pytester) -> None:
    url = str(project.path / "history.db")
    open_history(url).close()
    import sqlite3

    with sqlite3.connect(url) as connection:
        connection.execute("UPDATE schema_version SET version = ?", (LATEST_VERSION + 1,))
    result = _unwritable_history(project, url)
    result.stdout.fnmatch_lines(
        [f"*history.db: written by a newer pytest-graphrag-eval (schema version {LATEST_VERSION + 1}; "
         f"this version reads up to {LATEST_VERSION}): upgrade pytest-graphrag-eval to use it"]
    )  # fmt: skip


def test_a_database_of_something_else_is_not_touched(project: pytest.Pytester) -> None:
    import sqlite3

    url = str(project.path / "app.db")
    with sqlite3.connect(url) as connection:
        connection.execute("CREATE TABLE customers (name TEXT)")
    result = _unwritable_history(project, url)
    result.stdout.fnmatch_lines(
        ["*app.db: not a pytest-graphrag-eval history (it has other tables: customers)"]
    )


def test_a_run_key_that_exists_keeps_the_first_run(project: pytest.Pytester, tmp_path) -> None:
    url = str(tmp_path / "h.db")
    project.runpytest(*REPLAY, f"--graphrag-history={url}", "--graphrag-history-run-key", "nightly")
    result = _unwritable_history(project, url, "--graphrag-history-run-key", "nightly")
    result.stdout.fnmatch_lines(
        ["*NOT recorded in the history: run key 'nightly' is already recorded (run 1*"]
    )
    with open_history(url) as store:
        assert len(store.runs()) == 1


def test_under_xdist_the_run_is_recorded_once_by_the_controller(project: pytest.Pytester, tmp_path) -> None:
    url = str(tmp_path / "h.db")
    result = project.runpytest_subprocess(*REPLAY, "-n", "2", f"--graphrag-history={url}")
    result.assert_outcomes(passed=2, failed=1)
    with open_history(url) as store:
        (run,) = store.runs()
        assert (run.questions, run.failed) == (3, 1)
        assert store.question_outcomes(last_n=5).strips == {"q1": "P", "q2": "P", "q3": "F"}


def test_the_history_line_names_the_file_from_the_current_folder(project: pytest.Pytester, tmp_path) -> None:
    project.mkdir("history")
    inside = project.runpytest(*REPLAY, f"--graphrag-history={project.path / 'history' / 'h.db'}")
    inside.stdout.fnmatch_lines(["graphrag-eval: history: recorded run 1 (*) in history/h.db"])
    outside = project.runpytest(*REPLAY, f"--graphrag-history={tmp_path / 'h.db'}")
    outside.stdout.fnmatch_lines([f"graphrag-eval: history: recorded run 1 (*) in {tmp_path / 'h.db'}"])
