"""The plugin with a graph: stale references found, reported, gated; agent queries re-executed."""

from __future__ import annotations

import json

import pytest
from graph_support import RELEASE_1, RELEASE_2, outputs_on, small_corpus, small_responses, write_project

pytest_plugins = ["pytester"]
OLD = outputs_on(RELEASE_1)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A corpus and a recording made on release 1; both releases of the graph beside them."""
    write_project(
        pytester,
        small_corpus(OLD),
        small_responses(OLD),
        {"release1.ttl": RELEASE_1, "release2.ttl": RELEASE_2},
    )
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-report",
        "report.json",
        "--graphrag-threshold",
        "steps_score>=1",
        "-p",
        "no:cacheprovider",
        *args,
    )


def report(project: pytest.Pytester) -> dict:
    return json.loads(project.path.joinpath("report.json").read_text(encoding="utf-8"))


def test_fresh_references_pass_the_stale_gate(project: pytest.Pytester) -> None:
    result = run(
        project,
        "--graphrag-sparql-endpoint",
        "release1.ttl",
        "--graphrag-check-references",
        "--graphrag-gate",
        "stale_references<=0",
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*PASS  micro:stale_references = 0 <= 0*", "*0 question(s) stale*"])
    section = report(project)["references"]
    assert section["stale_references"] == 0 and section["questions_checked"] == 3
    assert section["graph"]["files"] == ["release1.ttl"]
    assert section["graph"]["content_hash"].startswith("sha256:")


def test_a_new_release_makes_references_stale_and_says_what_changed(project: pytest.Pytester) -> None:
    result = run(
        project,
        "--graphrag-sparql-endpoint",
        "release2.ttl",
        "--graphrag-check-references",
        "--graphrag-gate",
        "stale_references<=0",
    )
    output = result.stdout.str()
    assert "2 question(s) stale" in output
    assert (
        "STALE  in-zone-1 reference_steps[0][0]: 1 row added (s=http://example.org/grid#s4, name=Delta), "
        "1 row removed (s=http://example.org/grid#s2, name=Beta)"
    ) in output
    assert "STALE  beta-in-zone-1 reference_steps[0][0]: ASK flipped from true to false" in output
    assert "FAIL  micro:stale_references = 2, required <= 0" in output
    assert "gamma-name" not in output
    assert result.ret != 0
    section = report(project)["references"]
    assert [entry["question_id"] for entry in section["stale"]] == ["in-zone-1", "beta-in-zone-1"]
    step = section["stale"][0]["steps"][0]
    assert step["changes"]["rows_added_total"] == 1 and step["changes"]["rows_removed_total"] == 1
    assert report(project)["aggregates"]["per_template"]["zones"]["stale_references"] == 2


def test_a_failing_reference_query_is_its_questions_error(project: pytest.Pytester) -> None:
    corpus = small_corpus(OLD)
    corpus[0]["questions"][2]["reference_steps"][0][0]["args"]["query"] = "SELECT ?name WHERE { ?s ?p"
    write_project(project, corpus, small_responses(OLD), {})
    result = run(project, "--graphrag-sparql-endpoint", "release1.ttl", "--graphrag-check-references")
    result.assert_outcomes(passed=2, failed=1)
    assert (
        "gamma-name: reference_steps[0][0]: the reference query failed: not a valid read-only SPARQL query"
    ) in result.stdout.str()
    failing = next(r for r in report(project)["results"] if r["question_id"] == "gamma-name")
    assert failing["outcome"] == "failed"
    assert "steps_score" not in failing and "steps_score_error" in failing


def test_execute_agent_rescores_a_recording_on_the_new_release(project: pytest.Pytester) -> None:
    # The recording's outputs come from release 1, as do the stored references: all pass as recorded.
    run(project).assert_outcomes(passed=3)
    # Re-executed on release 2, the agent's queries give new rows the stale references do not have...
    result = run(project, "--graphrag-sparql-endpoint", "release2.ttl", "--graphrag-execute", "agent")
    result.assert_outcomes(passed=1, failed=2)
    metadata = report(project)["metadata"]["graph"]
    assert metadata["files"] == ["release2.ttl"] and metadata["execute"] == "agent"
    rescored = {r["question_id"]: r for r in report(project)["results"]}
    assert rescored["in-zone-1"]["graph"]["agent_steps"] == {"reexecuted": 1, "failed": 0}
    assert "Delta" in rescored["in-zone-1"]["actual_steps"][0]["output"]
    # ...and with the references computed on the same release too, the agent is right again.
    run(project, "--graphrag-sparql-endpoint", "release2.ttl", "--graphrag-execute", "both").assert_outcomes(
        passed=3
    )


def test_a_baseline_on_another_graph_is_said(project: pytest.Pytester) -> None:
    run(project, "--graphrag-sparql-endpoint", "release1.ttl", "--graphrag-execute", "both")
    project.path.joinpath("report.json").rename(project.path / "baseline.json")
    result = run(
        project,
        "--graphrag-sparql-endpoint",
        "release2.ttl",
        "--graphrag-execute",
        "both",
        "--graphrag-baseline",
        "baseline.json",
    )
    result.stdout.fnmatch_lines(
        ["*the baseline ran on graph release1.ttl (sha256:*), this run on release2.ttl*"]
    )
    assert any("differences may come from the data" in w for w in report(project)["warnings"])


def test_execute_reference_computes_missing_outputs(project: pytest.Pytester) -> None:
    corpus = small_corpus(OLD)
    for question in corpus[0]["questions"]:
        del question["reference_steps"][0][0]["output"]
    write_project(project, corpus, small_responses(OLD), {})
    run(
        project, "--graphrag-sparql-endpoint", "release1.ttl", "--graphrag-execute", "reference"
    ).assert_outcomes(passed=3)


def test_references_are_checked_and_filled_without_any_agent_answer(project: pytest.Pytester) -> None:
    corpus = small_corpus(OLD)
    del corpus[0]["questions"][0]["reference_steps"][0][0]["output"]  # a new question: query only
    write_project(project, corpus, [], {})
    result = project.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-sparql-endpoint", "release2.ttl",
        "--graphrag-update-references", "--graphrag-report", "report.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(skipped=3)
    assert result.ret == 0
    output = result.stdout.str()
    assert "updated corpus.yaml: in-zone-1 reference_steps[0][0]: no stored output" in output
    assert (
        "updated corpus.yaml: beta-in-zone-1 reference_steps[0][0]: ASK flipped from true to false" in output
    )
    assert report(project)["references"]["stale_references"] == 2
