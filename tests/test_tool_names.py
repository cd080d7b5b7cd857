"""Tool-name mapping: the agent's `run_sparql` scored as the corpus' `sparql_query`, from the ini file,
the command line or the corpus settings; without it the failure report says which mapping would match."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plugin_support import ROWS, corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval import ConfigurationError, corpus_from_data, run_evaluation
from pytest_graphrag_eval.adapters.tool_names import rename_tools
from pytest_graphrag_eval.evaluation import make_context


def agent_named(responses: list[dict[str, Any]], name: str = "run_sparql") -> list[dict[str, Any]]:
    return [
        {**response, "actual_steps": [{**step, "name": name} for step in response["actual_steps"]]}
        for response in responses
    ]


def test_mapping_renames_steps_before_scoring() -> None:
    reference = corpus_from_data(corpus())
    renamed = {r["question_id"]: r for r in agent_named(good_responses())}
    unmapped = run_evaluation(reference, renamed)
    mapped = run_evaluation(reference, renamed, options={"tool_names": {"run_sparql": "sparql_query"}})
    assert [r["steps_score"] for r in unmapped] == [0, 0, 0]
    assert [r["steps_score"] for r in mapped] == [1, 1, 1]
    assert [step["name"] for r in mapped for step in r["actual_steps"]] == ["sparql_query"] * len(ROWS)


def test_rename_leaves_inputs_alone_and_checks_the_mapping() -> None:
    response = agent_named(good_responses())[0]
    renamed = rename_tools(response, {"run_sparql": "sparql_query"})
    assert response["actual_steps"][0]["name"] == "run_sparql"
    assert renamed["actual_steps"][0]["name"] == "sparql_query"
    assert rename_tools(response, {"other": "x"}) is response
    with pytest.raises(ConfigurationError, match="must map the agent's tool names"):
        make_context("last_group", options={"tool_names": ["run_sparql"]})


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl", *args
    )


def test_unconfigured_mapping_is_named_in_the_failure_report(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, agent_named(good_responses()))
    result = run(pytester, "--graphrag-threshold", "steps_score>=1")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            "*no actual step named 'sparql_query' was executed",
            "*actual step call_q1 named 'run_sparql' would match under the tool-name mapping "
            "run_sparql = sparql_query, which is not configured*",
        ]
    )


@pytest.mark.parametrize("where", ["ini", "cli", "corpus"])
def test_mapping_from_ini_cli_or_corpus_settings(pytester: pytest.Pytester, where: str) -> None:
    data: Any = corpus()
    if where == "corpus":
        data = {"templates": data, "tool_names": {"run_sparql": "sparql_query"}}
    write_corpus(pytester, data)
    write_responses(pytester, agent_named(good_responses()))
    if where == "ini":
        pytester.makeini("[pytest]\ngraphrag_tool_names =\n    run_sparql = sparql_query\n")
    args = ["--graphrag-tool-name", "run_sparql=sparql_query"] if where == "cli" else []
    result = run(pytester, "--graphrag-threshold", "steps_score>=1", "--graphrag-report", "r.json", *args)
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "r.json").read_text())
    assert {step["name"] for r in report["results"] for step in r["actual_steps"]} == {"sparql_query"}


def test_bad_mappings_are_usage_errors(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, {"templates": corpus(), "tool_names": ["run_sparql"]})
    write_responses(pytester, good_responses())
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*corpus.yaml: settings: tool_names must map*"])
    result = run(pytester, "--graphrag-tool-name", "run_sparql")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--graphrag-tool-name (ini *): expected 'agent_name = corpus_name', got 'run_sparql'*"]
    )
