"""Every console script's options come from the plugin's declarations (issue 42): a value the plugin
refuses, `graphrag-eval-merge`, `graphrag-eval-history` and `graphrag-eval-corpus` (each subcommand) and
`answer-correctness` refuse in the same words, as a usage error (exit status 2), never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from history_support import run_report

from pytest_graphrag_eval.commands import answer, corpus, history, judge, merge
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.gates.suite_gates import parse_gate_list
from pytest_graphrag_eval.gates.thresholds import parse_threshold_list
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.options.command_line import CheckedOption
from pytest_graphrag_eval.options.declarations import OPTIONS, OptionSpec
from pytest_graphrag_eval.run.merge import merge_shard_reports

pytest_plugins = ["pytester"]

# Values a user may mistype; each option is tried with all, and must refuse exactly those its parser refuses.
CANDIDATES = (
    "0", "-3", "1.5", "ten", "", " ", "nan", "inf", "-1", "49", "100", "1001", "2000000", "bogus", "history:",
)  # fmt: skip
# What each command needs besides the option tried, so that only the option can be wrong.
POSITIONALS = {
    "graphrag-eval-merge": ["shard-1.json"],
    "answer-correctness": ["-i", "in.tsv", "-o", "out.tsv"],
    "graphrag-eval-history list": ["history.db", "list"],
    "graphrag-eval-history show": ["history.db", "show", "last"],
    "graphrag-eval-history flaky": ["history.db", "flaky"],
    "graphrag-eval-history trend": ["history.db", "trend", "steps_score.mean"],
    "graphrag-eval-history compare": ["history.db", "compare", "1", "2"],
    "graphrag-eval-history report": ["history.db", "report", "last"],
    "graphrag-eval-history import": ["history.db", "import", "report.json"],
    "graphrag-eval-history shards": ["history.db", "shards"],
    "graphrag-eval-history prune": ["history.db", "prune"],
    "graphrag-eval-corpus generate": ["generate", "templates.yaml", "--sparql-endpoint=graph.ttl"],
    "graphrag-eval-corpus coverage": ["coverage", "corpus.yaml", "--sparql-endpoint=graph.ttl"],
    "graphrag-eval-judge": ["--corpus", "corpus.yaml", "--labels", "labels.yaml"],
}
MAINS: dict[str, Callable[[Sequence[str]], int]] = {
    "graphrag-eval-merge": merge.merge_main,
    "answer-correctness": answer.answer_correctness_main,
    "graphrag-eval-history": history.main,
    "graphrag-eval-corpus": corpus.main,
    "graphrag-eval-judge": judge.main,
}


def commands() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command and subcommand with its parser."""
    found = [
        ("graphrag-eval-merge", merge._merge_parser()),
        ("answer-correctness", answer._parser()),
        ("graphrag-eval-judge", judge._parser()),
    ]
    for command, parser in (
        ("graphrag-eval-history", history._parser()),
        ("graphrag-eval-corpus", corpus._parser()),
    ):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += [(f"{command} {name}", sub) for name, sub in action.choices.items()]
    return found


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action
        for action in parser._actions
        if action.option_strings and not isinstance(action, argparse._HelpAction)
    ]


def refusal(spec: OptionSpec, value: str) -> str | None:
    """The parser's message for `value`, or None when it takes it."""
    try:
        spec.parse_layer(value, "cli")
    except ConfigurationError as error:
        return str(error)
    return None


def run_command(
    command: str, flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> tuple[object, str]:
    main = MAINS[command.split()[0]]
    with pytest.raises(SystemExit) as stopped:
        main([*POSITIONALS[command], f"{flag}={value}"])
    return stopped.value.code, capsys.readouterr().err


def test_every_command_option_is_a_declared_setting() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(pyproject["project"]["scripts"]) == set(MAINS)  # a new console script is walked too
    walked = {
        command: [action.option_strings[-1] for action in options(parser)] for command, parser in commands()
    }
    assert set(walked) == set(POSITIONALS)
    hand_made = [
        f"{command} {action.option_strings[-1]}"
        for command, parser in commands()
        for action in options(parser)
        if not isinstance(action, CheckedOption)
    ]
    assert hand_made == []
    shared = {
        action.origin.dest
        for _, parser in commands()
        for action in options(parser)
        if isinstance(action, CheckedOption) and action.origin in OPTIONS
    }
    assert {
        "graphrag_flaky_runs",
        "graphrag_flaky_flips",
        "graphrag_confidence",
        "graphrag_concurrency",
        "graphrag_corpus",
        "graphrag_threshold",
        "graphrag_gate",
    } <= shared


def test_each_option_refuses_the_values_its_plugin_setting_refuses_in_its_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    checked = 0
    for command, parser in commands():
        for action in options(parser):
            assert isinstance(action, CheckedOption)
            if action.nargs == 0:
                continue  # a flag takes no value to refuse
            flag = action.option_strings[-1]
            for value in CANDIDATES:
                expected = refusal(action.spec, value)
                plugin = refusal(action.origin, value) if action.origin in OPTIONS else None
                if action.spec.choices == action.origin.choices:  # not narrowed for the command
                    assert (plugin is None) == (expected is None) or action.origin not in OPTIONS, (
                        flag,
                        value,
                    )
                    if plugin is not None:
                        assert expected == plugin.replace(action.origin.label, flag), (command, flag, value)
                if expected is None:
                    continue
                status, err = run_command(command, flag, value, capsys)
                assert status == 2, (command, flag, value, err)
                if action.origin in OPTIONS:  # a grammar naming the plugin's flag (gates) names the command's
                    expected = expected.replace(action.origin.flag, flag)
                    assert action.origin.flag not in err, err
                assert f"error: {expected}\n" in err, (command, flag, value, err)
                assert err.startswith("usage: "), err
                checked += 1
    assert checked > 60  # every count, percent, choice and baseline option refused several values


def test_a_narrowed_choice_still_refuses_what_the_plugin_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_command("answer-correctness", "--judge", "none", capsys)
    assert status == 2
    assert "error: --judge must be one of llm, lexical, got 'none'" in err
    status, err = run_command("answer-correctness", "--judge", "bogus", capsys)
    assert status == 2 and "error: --judge must be one of llm, lexical, got 'bogus'" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--graphrag-flaky-runs", "0"),
        ("--graphrag-flaky-flips", "-3"),
        ("--graphrag-confidence", "100"),
        ("--graphrag-concurrency", "0"),
        ("--graphrag-judge", "bogus"),
        ("--graphrag-baseline", "history:"),
        # blank (an unset CI variable): it named the invocation folder, a file called " ", or nothing
        ("--graphrag-report", ""),
        ("--graphrag-markdown", " "),
        ("--graphrag-corpus", ""),
        ("--graphrag-baseline", " "),
        ("--graphrag-sparql-endpoint", ""),
        ("--graphrag-history", ""),
    ],
)
def test_the_plugin_refuses_the_same_values(pytester: pytest.Pytester, flag: str, value: str) -> None:
    spec = next(spec for spec in OPTIONS if spec.flag == flag)
    message = refusal(spec, value)
    assert message is not None
    result = pytester.runpytest(f"{flag}={value}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


@pytest.mark.parametrize("value", ["0", "-3"])
def test_the_merge_refuses_flaky_runs_out_of_range_as_a_usage_error(tmp_path: Path, value: str) -> None:
    """The issue's case: it ended in an IndexError traceback, with no report and nothing recorded."""
    merge = Path(sys.executable).with_name("graphrag-eval-merge")
    finished = subprocess.run(
        [str(merge), "shard-1.json", "--history", "new.db", "--flaky-runs", value, "--report", "report.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 2, finished.stderr
    assert "Traceback" not in finished.stderr + finished.stdout
    assert (
        f"graphrag-eval-merge: error: --flaky-runs must be between 1 and 1000, got {int(value)}"
        in finished.stderr
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.parametrize("days", ["nan", "inf", "1e9", "-1"])
def test_prune_refuses_waiting_days_it_cannot_count_back_as_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], days: str
) -> None:
    """nan, inf and 1e9 ended in a traceback from the date arithmetic, -1 in an error without usage."""
    url = str(tmp_path / "history.db")
    with open_history(url) as store:
        store.record_run(run_report(40, shard=(1, 2)), run_key="waiting", merge_shards=merge_shard_reports)
    with pytest.raises(SystemExit) as stopped:
        history.main([url, "prune", f"--waiting-days={days}"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ")
    assert f"error: --waiting-days must be a number of days from 0 to 36500, got {days!r}\n" in err
    with open_history(url) as store:
        assert [waiting.run_key for waiting in store.waiting_shards()] == ["waiting"]


def test_the_judge_joins_repeated_thresholds_and_gates_as_the_plugin_joins_one_layer() -> None:
    thresholds = ["answer_f1>=0.5", "answer_correctness>=0.6", "answer_f1>=0.7"]
    gates = ["judge:answer_correctness.kappa>=0.6", "judge:answer_correctness.accuracy>=0.8"]
    args = judge._parser().parse_args(
        [*POSITIONALS["graphrag-eval-judge"], "--corpus", "more.yaml"]
        + [f"--threshold={text}" for text in thresholds]
        + [f"--gate={text}" for text in gates]
    )
    assert args.threshold == parse_threshold_list(thresholds, "cli")  # the later answer_f1 wins
    assert list(args.gate) == parse_gate_list(gates, "cli")
    assert args.corpus == (Path("corpus.yaml"), Path("more.yaml"))


def test_the_judge_names_its_own_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad expression named --graphrag-threshold, and --labels was not required though declared so."""
    with pytest.raises(SystemExit):
        judge.main([*POSITIONALS["graphrag-eval-judge"], "--threshold", "answer_f1"])
    err = capsys.readouterr().err
    assert "graphrag-eval-judge: error: --threshold: invalid threshold 'answer_f1'" in err
    assert "--graphrag-threshold" not in err
    with pytest.raises(SystemExit) as stopped:
        judge.main(["--corpus", "corpus.yaml"])
    assert stopped.value.code == 2
    assert "error: the following arguments are required: --labels" in capsys.readouterr().err
