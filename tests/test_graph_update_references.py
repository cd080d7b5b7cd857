"""--graphrag-update-references rewrites only the stale outputs: every other byte of the corpus stays."""

from __future__ import annotations

import difflib
import json

import pytest
import yaml
from graph_support import EX, RELEASE_1, RELEASE_2, SMALL_QUERIES, outputs_on, small_responses

from pytest_graphrag_eval.graph.corpus_update import OutputUpdate, update_corpus_text

pytest_plugins = ["pytester"]
OLD, NEW = outputs_on(RELEASE_1), outputs_on(RELEASE_2)
GAMMA_IN_ZONE_2 = f"PREFIX ex: <{EX}>\nASK {{ ex:s3 ex:zone ex:z2 }}"


def single_quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def rich_corpus() -> str:
    """Comments, anchors and aliases, flow and block styles, unicode, folded and literal strings."""
    beta_step = (
        f"{{name: sparql_query, args: {{query: {json.dumps(SMALL_QUERIES['beta-in-zone-1'])}}}, "
        f"output: {json.dumps(OLD['beta-in-zone-1'])}, output_media_type: application/sparql-results+json}}"
    )
    in_zone_output = single_quoted(OLD["in-zone-1"]).replace(", ", ",\n          ", 1)
    return f"""# Reference corpus — zones of the grid (hand-written, with comments)
settings: &defaults
  note: "Ünïcødé stays: Ørsta, Tromsø, 東京"
templates:
- template_id: zones   # the only template
  questions:
  - id: in-zone-1
    question_text: >
      Which substations are
      in zone 1?
    reference_steps:
    - - name: sparql_query
        args: &in_zone_args
          query: |
{_indent(SMALL_QUERIES["in-zone-1"], 12)}
        # the stored result, single-quoted and folded over two lines
        output: {in_zone_output}
        output_media_type: application/sparql-results+json
  - id: beta-in-zone-1
    question_text: "Is Beta in zone 1? — «oui»"
    reference_steps:
    - - {beta_step}
  - id: gamma-name
    question_text: 'What is Gamma''s name?'
    reference_steps:
    - - name: sparql_query
        args: {{query: {json.dumps(SMALL_QUERIES["gamma-name"])}}}
        output: >-
          {OLD["gamma-name"]}
        output_media_type: application/sparql-results+json   # fresh in both releases
  - id: gamma-in-zone-2
    question_text: Is Gamma in zone 2?
    reference_steps:
    - - name: sparql_query
        args:
          query: {json.dumps(GAMMA_IN_ZONE_2)}
        # no output yet: the update fills it
"""


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.path.joinpath("corpus.yaml").write_text(rich_corpus(), encoding="utf-8")
    responses = [*small_responses(OLD), {"question_id": "gamma-in-zone-2", "actual_answer": "yes"}]
    pytester.path.joinpath("responses.jsonl").write_text(
        "".join(json.dumps(response) + "\n" for response in responses), encoding="utf-8"
    )
    pytester.path.joinpath("release2.ttl").write_text(RELEASE_2, encoding="utf-8")
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-sparql-endpoint", "release2.ttl", "-p", "no:cacheprovider", *args,
    )  # fmt: skip


def test_the_diff_shows_only_the_stale_outputs(project: pytest.Pytester) -> None:
    before = project.path.joinpath("corpus.yaml").read_text(encoding="utf-8")
    result = run(project, "--graphrag-update-references")
    output = result.stdout.str()
    assert "updated corpus.yaml: in-zone-1 reference_steps[0][0]: 1 row added" in output
    assert (
        "updated corpus.yaml: beta-in-zone-1 reference_steps[0][0]: ASK flipped from true to false" in output
    )
    assert "updated corpus.yaml: gamma-in-zone-2 reference_steps[0][0]: no stored output" in output
    assert "gamma-name reference_steps" not in output
    after = project.path.joinpath("corpus.yaml").read_text(encoding="utf-8")

    # The data: exactly the three outputs changed (one filled, with its media type), nothing else.
    expected = yaml.safe_load(before)
    questions = {question["id"]: question for question in expected["templates"][0]["questions"]}
    questions["in-zone-1"]["reference_steps"][0][0]["output"] = NEW["in-zone-1"]
    questions["beta-in-zone-1"]["reference_steps"][0][0]["output"] = NEW["beta-in-zone-1"]
    filled = questions["gamma-in-zone-2"]["reference_steps"][0][0]
    filled["output"] = '{"head": {}, "boolean": true}'
    filled["output_media_type"] = "application/sparql-results+json"
    assert yaml.safe_load(after) == expected

    # The text: every changed line is an output line of a stale step (or the two filled-in lines).
    old_lines, new_lines = before.splitlines(), after.splitlines()
    changed_old, added_new = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag != "equal":
            changed_old.extend(old_lines[i1:i2])
            added_new.extend(new_lines[j1:j2])
    assert all(
        line.lstrip().startswith(("output: '", "- - {name: sparql_query"))
        or line.startswith("          ")  # the folded continuation of in-zone-1's old output
        for line in changed_old
    ), changed_old
    assert len(changed_old) == 3  # in-zone-1's two output lines, beta's flow mapping line
    assert sum(line.lstrip().startswith("output:") for line in added_new) == 2
    assert "        output_media_type: application/sparql-results+json" in added_new
    # Comments, anchors, styles and unicode are all still there, byte for byte.
    for kept in (
        "# Reference corpus — zones of the grid (hand-written, with comments)",
        "settings: &defaults",
        '  note: "Ünïcødé stays: Ørsta, Tromsø, 東京"',
        "- template_id: zones   # the only template",
        "        args: &in_zone_args",
        "    question_text: >",
        "        # the stored result, single-quoted and folded over two lines",
        "        output: >-",
        "        output_media_type: application/sparql-results+json   # fresh in both releases",
        "        # no output yet: the update fills it",
    ):
        assert kept in new_lines
    # The refreshed corpus is fresh on release 2.
    check = run(project, "--graphrag-check-references", "--graphrag-gate", "stale_references<=0")
    check.assert_outcomes(passed=4)
    assert "0 question(s) stale" in check.stdout.str()


def test_an_output_behind_an_alias_is_refused_when_the_aliases_would_disagree() -> None:
    text = """- template_id: t
  questions:
  - id: a
    question_text: A?
    reference_steps:
    - - {name: sparql_query, args: {query: "ASK {}"}, output: &shared '{"head": {}, "boolean": true}'}
  - id: b
    question_text: B?
    reference_steps:
    - - {name: sparql_query, args: {query: "ASK {}"}, output: *shared}
"""
    flipped = '{"head": {}, "boolean": false}'
    new_text, problems = update_corpus_text(text, [OutputUpdate("a", 0, 0, flipped)])
    assert new_text == text
    assert problems == [
        "question 'a' reference_steps[0][0]: its output is an anchor other steps reuse through an alias, "
        "and they would not all get this new value: edit it by hand"
    ]
    # The alias itself can be replaced: only that step changes.
    new_text, problems = update_corpus_text(text, [OutputUpdate("b", 0, 0, flipped)])
    assert problems == []
    assert new_text == text.replace("output: *shared}", f"output: '{flipped}'}}")


def test_an_update_that_cannot_be_written_fails_the_run(pytester: pytest.Pytester) -> None:
    """Issue 30: an output the update could not write is a failed run, not "2 passed" and exit 0."""
    shared = json.dumps(OLD["beta-in-zone-1"])
    beta, gamma = json.dumps(SMALL_QUERIES["beta-in-zone-1"]), json.dumps(GAMMA_IN_ZONE_2)
    pytester.path.joinpath("corpus.yaml").write_text(
        f"""- template_id: t
  questions:
  - id: beta-in-zone-1
    question_text: Is Beta in zone 1?
    reference_steps:
    - - {{name: sparql_query, args: {{query: {beta}}}, output: &shared {shared}}}
  - id: gamma-in-zone-2
    question_text: Is Gamma in zone 2?
    reference_steps:
    - - {{name: sparql_query, args: {{query: {gamma}}}, output: *shared}}
""",
        encoding="utf-8",
    )
    responses = [
        {"question_id": "beta-in-zone-1", "actual_answer": "yes"},
        {"question_id": "gamma-in-zone-2", "actual_answer": "yes"},
    ]
    pytester.path.joinpath("responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
    pytester.path.joinpath("release2.ttl").write_text(RELEASE_2, encoding="utf-8")
    before = pytester.path.joinpath("corpus.yaml").read_text(encoding="utf-8")
    result = run(pytester, "--graphrag-update-references")
    result.stdout.fnmatch_lines(
        ["*update-references: corpus.yaml: question 'beta-in-zone-1'*edit it by hand*"]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert pytester.path.joinpath("corpus.yaml").read_text(encoding="utf-8") == before
