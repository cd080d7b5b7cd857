"""The README, `--help` and .ci/run stay in agreement with the code."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_graphrag_eval.options.declarations import OPTIONS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", README)[:2]


def test_readme_starts_with_two_commands_that_ci_runs() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert "example_project" in commands[0] and ".[test]" in commands[1]
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci_script


def test_every_option_and_ini_key_is_documented() -> None:
    options_page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    for spec in OPTIONS:
        assert f"`{spec.flag}" in options_page, spec.flag
        if spec.ini:
            assert f"`{spec.ini}`" in options_page, spec.ini


def test_every_option_is_in_help(pytester) -> None:
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    for spec in OPTIONS:
        assert spec.flag in out
        if spec.ini:
            assert spec.ini in out
