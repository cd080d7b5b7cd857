"""One canary password, written in every form libpq accepts, never reaches any output.

A role of the real PostgreSQL server has the canary as its password, with a `#` and an `@` in it.
Every URL form connects (userinfo percent-encoded, `?password=` encoded and not, a key=value string,
`postgres://` and `postgresql+psycopg://`, PGPASSWORD), or is refused without quoting it (an `@` left
unencoded in the userinfo, which libpq reads as part of the host), and the same forms with a wrong
password fail to connect: every subcommand of graphrag-eval-history, with and without `--json`, and
a pytest run's terminal, JSON report, Markdown summary, HTML report and JUnit XML are searched for
the canary, whole and percent-encoded.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from urllib.parse import quote

import pytest
from history_support import pytest_run, run_report
from html_report_support import EXAMPLE, ROOT
from postgres_server import PostgresServer

from pytest_graphrag_eval.commands.history import main
from pytest_graphrag_eval.history.locations import parse_location
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports

CANARY = "Canary#7s3cret@pw"
WRONG = "Wr0ng#canary@pw"
USER = "canary_user"
_databases = itertools.count(1)


def forms(server: PostgresServer, database: str, password: str) -> dict[str, str]:
    where = f"{server.host}:{server.port}/{database}"
    return {
        "userinfo, encoded": f"postgresql://{USER}:{quote(password, safe='')}@{where}",
        "postgres scheme": f"postgres://{USER}:{quote(password, safe='')}@{where}",
        "psycopg scheme": f"postgresql+psycopg://{USER}:{quote(password, safe='')}@{where}",
        "query, encoded": f"postgresql://{USER}@{where}?password={quote(password, safe='')}",
        "query, with # and @": f"postgresql://{USER}@{where}?sslmode=disable&password={password}",
        "key=value": f"host={server.host} port={server.port} dbname={database} user={USER} "
        f"password={password}",
    }


def leaked(text: str, password: str) -> bool:
    return any(form in text for form in {password, quote(password, safe=""), quote(password)})


@pytest.fixture(scope="module")
def canary_database(postgres_server: PostgresServer) -> str:
    """A database owned by a role whose password is the canary, with two runs and a waiting shard."""
    import psycopg
    from psycopg import sql

    name = f"canary_{next(_databases)}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(USER), sql.Literal(CANARY))
        )
        connection.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(USER))
        )
    url = forms(postgres_server, name, CANARY)["userinfo, encoded"]
    with open_history(url) as store:
        for night in range(2):
            store.record_run(
                run_report(night, failing=["q00001"] if night else []),
                run_key=f"night-{night}",
                provenance=RunProvenance(commit=f"c{night}", branch="main"),
            )
        store.record_run(run_report(3, shard=(1, 2)), run_key="waiting", merge_shards=merge_shard_reports)
    return name


SUBCOMMANDS = [
    ["list"],
    ["show", "last"],
    ["flaky"],
    ["trend", "steps_score.mean"],
    ["compare", "night-0", "night-1"],
    ["shards"],
    ["prune", "--keep", "5", "--dry-run"],
    ["show", "no-such-run"],  # an error path
    ["trend", "no_such_metric"],  # an error path
]


def test_no_subcommand_prints_the_password_in_any_url_form(
    canary_database: str,
    postgres_server: PostgresServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    report_json = tmp_path / "report.json"
    import_me = tmp_path / "import.json"
    import_me.write_text(__import__("json").dumps(run_report(9)), encoding="utf-8")
    urls = forms(postgres_server, canary_database, CANARY)
    for label, url in urls.items():
        for arguments in [*SUBCOMMANDS, ["report", "last", "--report", str(report_json)]]:
            for json_flag in ([], ["--json"]):
                status = main([url, *arguments, *json_flag])
                captured = capsys.readouterr()
                output = captured.out + captured.err
                assert not leaked(output, CANARY), (label, arguments, output)
                assert "Traceback" not in output
                if arguments[-1] not in ("no-such-run", "no_such_metric"):
                    assert status == 0, (label, arguments, output)
        assert not leaked(report_json.read_text(encoding="utf-8"), CANARY)
    # the password from the environment, and an import
    monkeypatch.setenv("PGPASSWORD", CANARY)
    bare = f"postgresql://{USER}@{postgres_server.host}:{postgres_server.port}/{canary_database}"
    assert main([bare, "import", str(import_me)]) == 0
    assert main([bare, "list", "--json"]) == 0
    output = "".join(capsys.readouterr())
    assert not leaked(output, CANARY) and "imported run" in output


def test_refused_and_failing_urls_never_quote_the_password(
    canary_database: str, postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]
) -> None:
    where = f"{postgres_server.host}:{postgres_server.port}/{canary_database}"
    refused = f"postgresql://{USER}:{CANARY}@{where}"  # '@' unencoded: libpq reads part of it as the host
    assert main([refused, "list"]) == 2
    output = "".join(capsys.readouterr())
    assert "percent-encode an '@' in the password as %40" in output
    for secret in (CANARY, CANARY.split("@")[1], CANARY.split("#")[1]):
        assert secret not in output
    hash_only = f"postgresql://{USER}:{CANARY.replace('@', '')}@{where}"  # an unencoded '#': a wrong password
    for url in [*forms(postgres_server, canary_database, WRONG).values(), hash_only]:
        for json_flag in ([], ["--json"]):
            assert main([url, "list", *json_flag]) == 2
            output = "".join(capsys.readouterr())
            assert "cannot connect" in output and "password authentication failed" in output, output
            assert not leaked(output, WRONG) and not leaked(output, CANARY.replace("@", ""))
    location = parse_location(hash_only)
    assert location.display == f"postgresql://{USER}:***@{where}"
    assert "Canary" not in repr(location)


@pytest.mark.parametrize("form", ["query, with # and @", "key=value"])
def test_a_run_recorded_through_a_url_with_the_password_prints_it_nowhere(
    canary_database: str, postgres_server: PostgresServer, tmp_path: Path, form: str
) -> None:
    outputs = {
        "--graphrag-report": tmp_path / "run.json",
        "--graphrag-markdown": tmp_path / "run.md",
        "--graphrag-html": tmp_path / "run.html",
        "--junitxml": tmp_path / "junit.xml",
    }
    for url, expected in (
        (forms(postgres_server, canary_database, CANARY)[form], "history: recorded run"),
        (forms(postgres_server, canary_database, WRONG)[form], "the run was NOT recorded in the history"),
    ):
        done = pytest_run(
            ROOT,
            str(EXAMPLE),
            "--graphrag-responses",
            str(EXAMPLE / "recordings" / "responses.jsonl"),
            f"--graphrag-history={url}",
            "--graphrag-baseline=history:last",
            *(f"{flag}={path}" for flag, path in outputs.items()),
        )
        terminal = done.stdout + done.stderr
        assert not leaked(terminal, CANARY) and not leaked(terminal, WRONG), terminal[-3000:]
        if expected.startswith("history:"):
            assert expected in terminal, terminal[-3000:]
            for path in outputs.values():
                text = path.read_text(encoding="utf-8")
                assert not leaked(text, CANARY), path
        else:  # the baseline cannot be read: a usage error at the start, saying why without the password
            assert done.returncode == 4 and "password authentication failed" in terminal, terminal[-3000:]
