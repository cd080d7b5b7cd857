"""One precedence rule for every setting: command line over ini over the answers config file."""

from __future__ import annotations

import pytest

from pytest_graphrag_eval.plugin.scorers_factory import answer_settings
from pytest_graphrag_eval.plugin.settings import PluginSettings


@pytest.mark.parametrize(
    ("ini_repeats", "cli_repeats", "file_repeats", "expected"),
    [
        (None, "1", 3, 1),  # the option's 1 is a value, not "unset"
        (None, "2", 3, 2),
        ("2", None, 3, 2),
        ("2", "1", 3, 1),
        (None, None, 3, 3),
        (None, None, None, 1),
        ("1", None, 3, 1),
    ],
)
def test_judge_repeats_command_line_over_ini_over_config_file(
    pytester: pytest.Pytester,
    ini_repeats: str | None,
    cli_repeats: str | None,
    file_repeats: int | None,
    expected: int,
) -> None:
    lines = ["judge: lexical"] + ([f"repeats: {file_repeats}"] if file_repeats is not None else [])
    pytester.makefile(".yaml", answers="\n".join(lines) + "\n")
    ini = ["[pytest]", "graphrag_answers_config = answers.yaml"]
    if ini_repeats is not None:
        ini.append(f"graphrag_judge_repeats = {ini_repeats}")
    pytester.makeini("\n".join(ini) + "\n")
    args = ["--graphrag-judge-repeats", cli_repeats] if cli_repeats is not None else []
    config = pytester.parseconfigure(*args)

    settings = PluginSettings.from_config(config)

    assert answer_settings(settings).repeats == expected
