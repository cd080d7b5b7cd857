"""Where a history setting points: `sqlite:///` paths in the ini file resolved against the ini file like
plain paths, `~` expanded on the command line and in the ini file, and a setting that can never work
stopping the run before its first question."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from history_support import pytest_run
from html_report_support import EXAMPLE

from pytest_graphrag_eval.history.locations import parse_location, resolve_history_url


def test_a_history_setting_is_resolved_against_its_layers_folder() -> None:
    base = Path("/project")
    home = Path("~").expanduser()
    assert resolve_history_url("sqlite:///hist/h.db", base) == "sqlite:////project/hist/h.db"
    assert resolve_history_url("sqlite:////abs/h.db", base) == "sqlite:////abs/h.db"
    assert resolve_history_url("hist/h.db", base) == "/project/hist/h.db"
    assert resolve_history_url("~/h.db", base) == str(home / "h.db")
    assert resolve_history_url("sqlite:///~/h.db", base) == f"sqlite:///{home / 'h.db'}"
    for url in ("postgresql://ci@db/evals", "host=db dbname=evals", "mysql://u@h/db"):
        assert resolve_history_url(url, base) == url
    assert parse_location("sqlite:////project/hist/h.db").path == Path("/project/hist/h.db")


def example_copy(tmp_path: Path, ini_lines: str = "") -> Path:
    example = tmp_path / "example_project"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("reports", "__pycache__"))
    ini = example / "pytest.ini"
    ini.write_text(ini.read_text(encoding="utf-8") + ini_lines, encoding="utf-8")
    (example / "sub").mkdir()
    return example


def test_the_ini_files_sqlite_url_and_a_tilde_path_land_where_they_say(tmp_path: Path) -> None:
    example = example_copy(tmp_path, "graphrag_history = sqlite:///hist/h.db\n")
    home = tmp_path / "home"
    home.mkdir()
    responses = ["--graphrag-responses", str(example / "recordings" / "responses.jsonl")]
    from_subfolder = pytest_run(example / "sub", str(example), *responses, home=home)
    assert "history: recorded run 1" in from_subfolder.stdout, from_subfolder.stdout[-3000:]
    assert (example / "hist" / "h.db").exists() and not (example / "sub" / "hist").exists()
    on_command_line = pytest_run(
        example / "sub", str(example), *responses, "--graphrag-history=~/h.db", home=home
    )
    assert f"in {home / 'h.db'}" in on_command_line.stdout, on_command_line.stdout[-3000:]
    assert (home / "h.db").exists() and not any(path.name == "~" for path in example.rglob("*"))


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("mysql://ci:hunter2pw@db/evals", "unknown history scheme 'mysql'"),
        (
            "postgresql://ci:hunter2pw@db/evals?no_such_option=1",
            "the PostgreSQL history URL is not a connection string libpq accepts",
        ),
        # a malformed sqlite: URL is refused, never taken for a file named "sqlite:"
        ("sqlite://db-host/h.db", "sqlite://db-host/h.db: an SQLite history URL is sqlite:///relative.db"),
        ("sqlite:///", "sqlite:///: an SQLite history URL is sqlite:///relative.db"),
    ],
)
def test_a_history_that_can_never_work_stops_the_run_before_any_question(
    tmp_path: Path, setting: str, message: str
) -> None:
    example = example_copy(tmp_path)
    done = pytest_run(example, f"--graphrag-history={setting}", home=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 4, output[-3000:]
    assert f"--graphrag-history (ini graphrag_history): {message}" in output
    assert "hunter2pw" not in output and "passed" not in output and "Traceback" not in output
    assert not any(path.name.startswith("sqlite:") for path in example.rglob("*"))


def test_the_merge_refuses_a_history_that_can_never_work_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_graphrag_eval.commands.merge import merge_main

    missing_shard = tmp_path / "not-read.json"
    with pytest.raises(SystemExit) as refused:  # the declared --history parser: a usage error
        merge_main([str(missing_shard), "--history", "mysql://ci:hunter2pw@db/evals"])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert "unknown history scheme 'mysql'" in error and "hunter2pw" not in error
    assert "not-read.json" not in error  # refused before any shard is read
