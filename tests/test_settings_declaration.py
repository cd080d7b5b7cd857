"""One declaration per setting: each layer is parsed by the option's own parser and merged by its rule,
and the run reads resolved values only (issue 28's settings defects, issue 30's silent judge options)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.options.declarations import OPTIONS
from pytest_graphrag_eval.plugin.settings import PluginSettings


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl", *args
    )


def renamed(responses: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [{**r, "actual_steps": [{**s, "name": name} for s in r["actual_steps"]]} for r in responses]


def test_judge_from_the_answers_config_file_is_in_the_report_metadata(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makefile(".yaml", answers="judge: lexical\nrepeats: 2\n")
    result = run(pytester, "--graphrag-answers-config", "answers.yaml", "--graphrag-report", "r.json")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "r.json").read_text())
    assert "answer_recall" in report["results"][0]  # scored lexically
    assert report["metadata"]["judge"] == "lexical"
    # The record shard merges compare holds the resolved repeats, not the unset command line's None.
    assert report["metadata"]["settings"]["judge_repeats"] == 2


def test_a_corpus_tool_mapping_for_another_tool_keeps_the_command_line_mapping(
    pytester: pytest.Pytester,
) -> None:
    write_corpus(pytester, {"templates": corpus(), "tool_names": {"other_tool": "something_else"}})
    write_responses(pytester, renamed(good_responses(), "run_sparql"))
    result = run(
        pytester, "--graphrag-tool-name", "run_sparql=sparql_query", "--graphrag-threshold", "steps_score>=1"
    )
    result.assert_outcomes(passed=3)


def test_the_command_line_mapping_wins_over_the_corpus_file_on_the_same_tool(
    pytester: pytest.Pytester,
) -> None:
    write_corpus(pytester, {"templates": corpus(), "tool_names": {"run_sparql": "wrong_name"}})
    write_responses(pytester, renamed(good_responses(), "run_sparql"))
    result = run(
        pytester, "--graphrag-tool-name", "run_sparql=sparql_query", "--graphrag-threshold", "steps_score>=1"
    )
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize(
    "corpus_mapping",
    [{"other_tool": "something_else"}, {"run_sparql": "wrong_name"}],
    ids=["another-tool", "same-tool"],
)
def test_the_ini_mapping_is_merged_with_the_corpus_file_tool_by_tool_and_wins(
    pytester: pytest.Pytester, corpus_mapping: dict[str, str]
) -> None:
    """docs/live-agents.md and docs/options.md: a corpus file's `tool_names` adds tools; on a tool
    both map, the ini file's mapping wins (it does not replace the ini's mapping)."""
    write_corpus(pytester, {"templates": corpus(), "tool_names": corpus_mapping})
    write_responses(pytester, renamed(good_responses(), "run_sparql"))
    pytester.makeini("[pytest]\ngraphrag_tool_names =\n    run_sparql = sparql_query\n")
    result = run(pytester, "--graphrag-threshold", "steps_score>=1")
    result.assert_outcomes(passed=3)


def test_two_mappings_for_one_agent_tool_are_a_usage_error(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, renamed(good_responses(), "run_sparql"))
    result = run(
        pytester,
        "--graphrag-tool-name",
        "run_sparql=sparql_query",
        "--graphrag-tool-name",
        "run_sparql=other_name",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--graphrag-tool-name (ini graphrag_tool_names): the agent tool 'run_sparql' is mapped twice, "
            "to 'sparql_query' and to 'other_name'*"
        ]
    )
    # The same mapping twice is no conflict.
    result = run(pytester, *["--graphrag-tool-name", "run_sparql=sparql_query"] * 2)
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_a_sparql_timeout_that_is_not_a_positive_number_is_refused(
    pytester: pytest.Pytester, value: str
) -> None:
    pytester.makefile(".ttl", graph="")
    result = pytester.runpytest(
        "--graphrag-sparql-endpoint",
        "graph.ttl",
        "--graphrag-check-references",
        f"--graphrag-sparql-timeout={value}",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--graphrag-sparql-timeout (ini *) must be a number of seconds > 0, got '{value}'*"]
    )


def test_a_judge_model_without_an_llm_judge_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = run(pytester, "--graphrag-judge-model", "some-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--graphrag-judge-model sets the LLM judge, but nothing in this run*"])
    result = run(pytester, "--graphrag-judge", "lexical", "--graphrag-judge-model", "some-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_an_ini_value_and_a_command_line_value_go_through_the_same_parser(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ngraphrag_agent_concurrency = 0\n")
    message = (
        r"--graphrag-agent-concurrency \(ini graphrag_agent_concurrency\) must be between 1 and 1024, got 0"
    )
    with pytest.raises(pytest.UsageError, match=message):
        PluginSettings.from_config(pytester.parseconfigure())
    pytester.makeini("[pytest]\n")
    with pytest.raises(pytest.UsageError, match=message):
        PluginSettings.from_config(pytester.parseconfigure("--graphrag-agent-concurrency", "0"))


def test_every_setting_reaches_plugin_settings_or_the_judge_resolution() -> None:
    fields = set(PluginSettings.__dataclass_fields__)
    for spec in OPTIONS:
        assert (spec.setting in fields) != (spec.file_key is not None), spec.flag
