"""One precedence rule for every setting: command line over ini over the answers config file over
defaults and the environment, unset options (None) falling through; the library uses the same rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, first_set, resolve_judge_settings
from pytest_graphrag_eval.plugin.settings import PluginSettings


def plugin_settings(
    pytester: pytest.Pytester, cli: list[str], ini: list[str], answers_file: list[str] | None
) -> PluginSettings:
    lines = ["[pytest]", *ini]
    if answers_file is not None:
        pytester.makefile(".yaml", answers="\n".join(answers_file) + "\n")
        lines.append("graphrag_answers_config = answers.yaml")
    pytester.makeini("\n".join(lines) + "\n")
    return PluginSettings.from_config(pytester.parseconfigure(*cli))


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
    file = ["judge: lexical"] + ([f"repeats: {file_repeats}"] if file_repeats is not None else [])
    ini = [f"graphrag_judge_repeats = {ini_repeats}"] if ini_repeats is not None else []
    cli = ["--graphrag-judge-repeats", cli_repeats] if cli_repeats is not None else []

    settings = plugin_settings(pytester, cli, ini, file)

    assert settings.answers.repeats == expected


# (setting, command line, ini line, config-file line, the resolved value of each layer, the default)
LAYERED = [
    (
        "judge",
        ["--graphrag-judge", "llm"],
        "graphrag_judge = lexical",
        "judge: none",
        ("llm", "lexical", "none", "none"),
        lambda settings: settings.answers.judge,
    ),
    (
        "judge_model",
        ["--graphrag-judge-model", "cli-model"],
        "graphrag_judge_model = ini-model",
        "judge_model: file-model",
        ("cli-model", "ini-model", "file-model", "gpt-4o-mini"),
        lambda settings: settings.llm.model,
    ),
    (
        "embedding_model",
        ["--graphrag-embedding-model", "cli-embed"],
        "graphrag_embedding_model = ini-embed",
        "embedding_model: file-embed",
        ("cli-embed", "ini-embed", "file-embed", "text-embedding-3-small"),
        lambda settings: settings.llm.embedding_model,
    ),
    (
        "relevance",
        ["--graphrag-relevance"],
        "graphrag_relevance = true",
        "relevance: true",
        (True, True, True, False),
        lambda settings: settings.answers.relevance,
    ),
    (
        "correctness_prompt",
        ["--graphrag-correctness-prompt", "cli.txt"],
        "graphrag_correctness_prompt = ini.txt",
        "correctness_prompt_file: file.txt",
        ("cli.txt", "ini.txt", "file.txt", None),
        lambda settings: getattr(settings.answers.correctness_prompt_file, "name", None),
    ),
    (
        "concurrency",
        ["--graphrag-concurrency", "3"],
        "graphrag_concurrency = 5",
        None,  # the client's concurrency is not an answers-file option
        (3, 5, None, 8),
        lambda settings: settings.llm.concurrency,
    ),
    (
        "max_cost",
        ["--graphrag-max-cost", "0.5"],
        "graphrag_max_cost = 2",
        None,
        (0.5, 2.0, None, None),
        lambda settings: settings.llm.max_cost_usd,
    ),
    (
        "cache_dir",
        ["--graphrag-cache-dir", "cli-cache"],
        "graphrag_cache_dir = ini-cache",
        None,
        ("cli-cache", "ini-cache", None, ".graphrag-cache"),
        lambda settings: settings.llm.cache_dir.name,
    ),
]


# Each setting with each layer as the highest one set (settings without a config-file form skip that layer).
CASES = [
    pytest.param(*row, top, id=f"{top}-{row[0]}")
    for row in LAYERED
    for top in ("cli", "ini", "file", "default")
    if not (top == "file" and row[3] is None)
]


@pytest.mark.parametrize(("name", "cli", "ini", "file", "values", "read", "top"), CASES)
def test_every_judge_setting_command_line_over_ini_over_config_file_over_default(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    cli: list[str],
    ini: str,
    file: str | None,
    values: tuple[Any, ...],
    read: Any,
    top: str,
) -> None:
    """Each layer set from `top` down: the highest one set wins, whatever the layers below say."""
    for prompt in ("cli.txt", "ini.txt", "file.txt"):
        pytester.makefile(".txt", **{prompt[:-4]: "{question} {reference_answer} {actual_answer}"})
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    order = ["cli", "ini", "file", "default"]
    present = order[order.index(top) :]
    settings = plugin_settings(
        pytester,
        cli if "cli" in present else [],
        [ini] if "ini" in present else [],
        ["repeats: 1", file] if file is not None and "file" in present else ["repeats: 1"],
    )
    assert read(settings) == values[order.index(top)]


def test_the_library_resolves_a_config_file_by_the_same_rule(tmp_path: Path) -> None:
    """No option layers: the file over the environment over the built-in defaults."""
    config = tmp_path / "answers.yaml"
    config.write_text("judge: llm\njudge_model: file-model\nrepeats: 3\n", encoding="utf-8")
    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k"}

    library = resolve_judge_settings((), config, environ=environ)
    with_options = resolve_judge_settings(
        [JudgeOptions(repeats=1), JudgeOptions(repeats=2)], config, environ=environ
    )

    assert (library.answers.judge, library.answers.repeats, library.llm.model) == ("llm", 3, "file-model")
    assert library.llm.base_url == "http://127.0.0.1:9/v1"  # from the environment, nothing above sets it
    assert with_options.answers.repeats == 1  # the first layer's 1 is a value, not "unset"
    assert resolve_judge_settings((), None, environ={}).answers.judge == "lexical"


def test_first_set_takes_each_option_from_the_first_layer_that_sets_it() -> None:
    merged = first_set(
        [JudgeOptions(judge_model="a"), JudgeOptions(judge_model="b", repeats=2), JudgeOptions(repeats=3)]
    )
    assert (merged.judge_model, merged.repeats, merged.concurrency) == ("a", 2, None)


def test_an_xdist_worker_gets_its_share_of_the_judge_budget(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ngraphrag_max_cost = 3\ngraphrag_max_calls = 10\n")
    config = pytester.parseconfigure()
    config.workerinput = {"workercount": 2}  # type: ignore[attr-defined]
    settings = PluginSettings.from_config(config)
    assert (settings.llm.max_cost_usd, settings.llm.max_calls) == (3.0, 10)  # the run's limits
    assert (settings.client_llm.max_cost_usd, settings.client_llm.max_calls) == (
        1.5,
        5,
    )  # this worker's client
