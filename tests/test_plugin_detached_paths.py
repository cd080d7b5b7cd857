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
            "ERROR: pytest took '../base.json', the value of --graphrag-baseline, for a test path*"
            f"instead of {project / 'pytest.ini'}*Write the option with '=': --graphrag-baseline=../base.json"
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


def test_an_existing_output_inside_the_repository_is_caught_too(tmp_path: Path) -> None:
    """docs/html-report.md's command run twice from the repository root: the second time the HTML file
    exists, pytest takes it for a test path, and the common ancestor's pyproject.toml is read instead of
    the project's pytest.ini."""
    from pytest_graphrag_eval.errors import ConfigurationError
    from pytest_graphrag_eval.plugin.detached_paths import check_detached_path_values

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "pytest.ini").write_text("[pytest]\ngraphrag_corpus = corpus.yaml\n")
    args = ["project", "--graphrag-html", "reports/report.html"]
    # First run: the file does not exist yet, pytest reads the project's ini.
    check_detached_path_values(args, tmp_path, tmp_path / "project", tmp_path / "project" / "pytest.ini")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "report.html").write_text("<html></html>")
    with pytest.raises(
        ConfigurationError, match=r"Write the option with '=': --graphrag-html=reports/report.html"
    ):
        check_detached_path_values(args, tmp_path, tmp_path, tmp_path / "pyproject.toml")
    # Written with '=', the value is no test path: nothing to say.
    check_detached_path_values(
        ["project", "--graphrag-html=reports/report.html"],
        tmp_path,
        tmp_path / "project",
        tmp_path / "project" / "pytest.ini",
    )
