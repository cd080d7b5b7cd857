"""A path option's value written after a space, outside the project, must not make the run vanish.

pytest picks its rootdir and config file before plugin options are known, so
`--graphrag-baseline ../base.json` reads as a test path; from a project folder
inside a repository with its own pytest configuration, the project's ini file
is skipped and its corpus never collected. The plugin stops and says how to
write it instead of letting "no tests ran" pass in CI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).parent.parent / "docs" / "examples" / "quickstart"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with its own pytest config, and a project folder with the corpus and its ini."""
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    folder = pytester.mkdir("qa")
    for name in ("corpus.yaml", "responses.json"):
        shutil.copy(QUICKSTART / name, folder / name)
    (folder / "pytest.ini").write_text(
        "[pytest]\ngraphrag_corpus = corpus.yaml\ngraphrag_responses = responses.json\n", encoding="utf-8"
    )
    monkeypatch.chdir(folder)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--graphrag-report=../base.json")
    result.assert_outcomes(passed=3)
    return folder


def test_separated_value_outside_the_project_is_a_usage_error_naming_the_fix(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--graphrag-baseline", "../base.json")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest takes '../base.json' (the value of --graphrag-baseline) for a test path*"
            f"instead of the rootdir {project} and the config file {project / 'pytest.ini'}*"
            "Write the option with '=': --graphrag-baseline=../base.json"
        ]
    )


def test_the_equals_form_and_values_inside_the_project_run_the_corpus(
    pytester: pytest.Pytester, project: Path
) -> None:
    shutil.copy(project.parent / "base.json", project / "base.json")
    for args in (
        ("--graphrag-baseline=../base.json",),
        ("--graphrag-baseline", "base.json"),
        ("--graphrag-report", "report.json"),
    ):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        result.assert_outcomes(passed=3)


def test_an_output_outside_the_project_is_refused_on_its_first_run_too(tmp_path: Path) -> None:
    """docs/html-report.md's command run from the repository root: once the HTML file exists, pytest takes
    it for a test path and reads the common ancestor's pyproject.toml instead of the project's pytest.ini.
    The command stops on its first run already (not once it has worked), naming the option that moves
    the rootdir, not the one whose value lies inside the project."""
    from pytest_graphrag_eval.errors import ConfigurationError
    from pytest_graphrag_eval.plugin.detached_paths import check_detached_values

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "pytest.ini").write_text("[pytest]\ngraphrag_corpus = corpus.yaml\n")
    (tmp_path / "project" / "responses.jsonl").write_text("")
    args = ["project", "--graphrag-responses", "project/responses.jsonl", "--graphrag-html", "reports/r.html"]
    fix = r"Write the option with '=': --graphrag-html=reports/r.html$"
    with pytest.raises(ConfigurationError, match=fix):
        check_detached_values(args, ["project"], tmp_path)  # the first run: no reports/ folder yet
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.html").write_text("<html></html>")
    with pytest.raises(ConfigurationError, match=fix):
        check_detached_values(args, ["project"], tmp_path)
    # With '=', or with every value inside the project, nothing moves.
    check_detached_values(["project", "--graphrag-html=reports/r.html"], ["project"], tmp_path)
    check_detached_values(
        ["project", "--graphrag-responses", "project/responses.jsonl", "--graphrag-html", "project/r.html"],
        ["project"],
        tmp_path,
    )


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--graphrag-report", "out/report.json"),
        ("--graphrag-markdown", "out/summary.md"),
        ("--graphrag-record", "out/responses.jsonl"),
        ("--graphrag-cache-dir", "cache"),
        ("--graphrag-history", "runs.sqlite"),
        ("--graphrag-baseline", "base.json"),
        ("--graphrag-corpus", "elsewhere/corpus.yaml"),
        ("--graphrag-judge", "llm"),  # a value that is no path, beside a folder of that name
    ],
)
def test_every_option_taking_a_value_is_guarded(tmp_path: Path, flag: str, value: str) -> None:
    """Every option that takes a value, existing or not (a path option's file may be this run's output)."""
    from pytest_graphrag_eval.errors import ConfigurationError
    from pytest_graphrag_eval.plugin.detached_paths import check_detached_values

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "base.json").write_text("{}")
    (tmp_path / "llm").mkdir()
    with pytest.raises(ConfigurationError, match=f"Write the option with '=': {flag}={value}$"):
        check_detached_values(["project", flag, value], ["project"], tmp_path)
    check_detached_values(["project", f"{flag}={value}"], ["project"], tmp_path)
    check_detached_values(
        ["project", "--graphrag-sparql-endpoint", "http://127.0.0.1:1/q"], ["project"], tmp_path
    )


def test_pytest_addopts_values_are_guarded(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "--graphrag-report ../base.json")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Write the option with '=': --graphrag-report=../base.json"])
