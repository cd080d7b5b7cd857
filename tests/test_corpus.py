"""Corpus loading: typed records with locations, and errors naming file, line, ids and field."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from pytest_graphrag_eval import CorpusError, corpus_from_data, load_corpus
from pytest_graphrag_eval.corpus.reference_corpus import ReferenceReading

GOOD = """\
- template_id: zones
  thresholds: [steps_score>=1]
  questions:
  - id: q1
    question_text: Which substations are in NO1?
    reference_answer: OSLO, ASKER
    xfail: not supported yet
    custom_note: kept
    reference_steps:
    - - name: sparql_query
        output: '{"head": {"vars": ["s"]}, "results": {"bindings": []}}'
        output_media_type: application/sparql-results+json
        required_columns: [s]
  - id: q2
    question_text: Which substations are in NO2?
    reference_answer: [KRISTIANSAND, "Kristiansand"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "corpus.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# An explicit tag leaves the document to the node-based loader: records and locations come out the same.
TAGGED = (
    "question_text: Which substations are in NO1?",
    "question_text: !!str Which substations are in NO1?",
)


@pytest.fixture(params=["events", "nodes"])
def loader_path(request: pytest.FixtureRequest) -> tuple[str, str]:
    """How GOOD is edited so that one YAML loader path or the other builds it."""
    return TAGGED if request.param == "nodes" else ("", "")


def test_records_keep_content_and_location(tmp_path: Path, loader_path: tuple[str, str]) -> None:
    corpus = load_corpus(write(tmp_path, GOOD.replace(*loader_path)))
    first, second = corpus.questions()
    assert (first.template_id, first.question_id, first.location.line) == ("zones", "q1", 4)
    assert first.location.file == str(tmp_path / "corpus.yaml")
    assert first.xfail == "not supported yet" and first.extra == {"custom_note": "kept"}
    assert first.reference_steps[0][0]["required_columns"] == ["s"]
    assert type(first.reference_steps[0][0]) is dict, "records hold plain dicts"
    assert second.reference_answer == ["KRISTIANSAND", "Kristiansand"]
    assert corpus.templates[0].thresholds == ["steps_score>=1"]
    assert corpus.question_ids() == ["q1", "q2"]


def test_mapping_form_carries_settings(tmp_path: Path) -> None:
    text = "gates: [steps_score.mean>=0.9]\ntemplates:\n" + "".join(
        "  " + line + "\n" for line in GOOD.splitlines()
    )
    corpus = load_corpus(write(tmp_path, text))
    assert corpus.settings == {"gates": ["steps_score.mean>=0.9"]}
    assert len(list(corpus.questions())) == 2


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "    question_text: Which substations are in NO2?\n",
            "",
            "corpus.yaml:14, template 'zones', question 'q2', field 'question_text': is missing",
        ),
        ("  - id: q2", "  - id: q1", "question 'q1', field 'id': duplicate question id (first defined at"),
        ("- template_id: zones", "- template: zones", "field 'template_id': is missing"),
        (
            "    reference_answer: [KRISTIANSAND",
            "    reference_steps: [{name: x}]\n    reference_answer: [KRISTIANSAND",
            "question 'q2', field 'reference_steps': must be a list of groups",
        ),
        ("    reference_answer: OSLO, ASKER", "    reference_answer: {a: 1}", "field 'reference_answer'"),
        ("    xfail: not supported yet", "    xfail: [1]", "field 'xfail'"),
        (  # a step is named at its own line
            "        required_columns: [s]\n",
            "        required_columns: [s]\n      - output: '{}'\n",
            "corpus.yaml:14, template 'zones', question 'q1', field 'reference_steps[0][1].name': is missing",
        ),
        (
            "        required_columns: [s]\n",
            "        required_columns: [s]\n      - just text\n",
            # text has no line of its own: its question's
            "corpus.yaml:4, template 'zones', question 'q1', field 'reference_steps[0][1]': each step must",
        ),
    ],
)
def test_structural_errors_stop_loading_with_location(
    tmp_path: Path, old: str, new: str, message: str, loader_path: tuple[str, str]
) -> None:
    assert old in GOOD
    with pytest.raises(CorpusError) as raised:
        load_corpus(write(tmp_path, GOOD.replace(*loader_path).replace(old, new)))
    assert str(tmp_path / "corpus.yaml") in str(raised.value)
    assert message in str(raised.value)


def test_values_shared_by_anchors_load_as_plain_data_with_their_lines(
    tmp_path: Path, loader_path: tuple[str, str]
) -> None:
    """A corpus written by `yaml.safe_dump` from shared objects: the aliased mappings and lists are plain
    dicts and lists in every question, and each step keeps its own line."""
    text = GOOD.replace(*loader_path).replace(
        "        required_columns: [s]\n",
        "        required_columns: &columns [s]\n        args: &args {query: ASK WHERE}\n",
    )
    text += (
        "    reference_steps:\n    - - name: sparql_query\n"
        '        output: \'{"head": {"vars": ["s"]}, "results": {"bindings": []}}\'\n'
        "        output_media_type: application/sparql-results+json\n"
        "        required_columns: *columns\n        args: *args\n"
    )
    first, second = load_corpus(write(tmp_path, text)).questions()
    steps = [first.reference_steps[0][0], second.reference_steps[0][0]]  # type: ignore[index]
    assert [type(step["args"]) for step in steps] == [dict, dict]
    assert [step["args"] for step in steps] == [{"query": "ASK WHERE"}] * 2
    assert [step["required_columns"] for step in steps] == [["s"], ["s"]]
    assert (first.reference_lines, second.reference_lines) == (((10,),), ((19,),))


def test_invalid_yaml_names_line(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"corpus.yaml:4: invalid YAML"):
        load_corpus(write(tmp_path, "- template_id: a\n  questions:\n  - id: [\n"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="cannot read corpus file"):
        load_corpus(tmp_path / "absent.yaml")


def test_reference_step_content_problems_stay_on_the_question(tmp_path: Path) -> None:
    text = GOOD.replace("required_columns: [s]", "required_columns: [s, missing_var]")
    corpus = load_corpus(write(tmp_path, text))
    first, second = corpus.questions()
    assert len(first.reference_problems) == 1
    assert "reference_steps[0][0] (line 10)" in first.reference_problems[0]
    assert "missing_var" in first.reference_problems[0]
    assert second.reference_problems == ()


def test_reference_steps_are_read_once_on_first_use_and_afresh_after_replace(tmp_path: Path) -> None:
    text = GOOD.replace("required_columns: [s]", "required_columns: [s, missing_var]")
    first, _ = load_corpus(write(tmp_path, text)).questions()
    reading = first.reference_reading
    assert first.reference_reading is reading  # read once, kept
    assert first.reference_problems is reading.problems and first.reference_reading.tables is reading.tables
    # A question with other reference steps reads its own, never the old reading.
    fixed = copy.deepcopy(first.reference_steps)
    fixed[0][0]["required_columns"] = ["s"]
    replaced = dataclasses.replace(first, reference_steps=fixed)
    assert replaced.reference_problems == ()
    assert first.reference_problems == reading.problems
    # Readings given from elsewhere (live reference outputs) are used as given.
    given = ReferenceReading(problems=("reference query failed",))
    assert dataclasses.replace(first, references_read=given).reference_problems == ("reference query failed",)


SHARED_OUTPUT = """\
- template_id: variants
  questions:
  - id: v1
    question_text: Which capital?
    reference_steps:
    - - name: sparql_query
        output: '{OUTPUT}'
        output_media_type: application/sparql-results+json
        required_columns: [{COLUMN}]
  - id: v2
    question_text: Which capital?
    reference_steps:
    - - name: sparql_query
        args: {{query: "SELECT ?c WHERE {{}}"}}
        output: '{OUTPUT}'
        output_media_type: application/sparql-results+json
        required_columns: [{COLUMN}]
"""
CAPITAL = '{"head": {"vars": ["c"]}, "results": {"bindings": [{"c": {"type": "literal", "value": "Oslo"}}]}}'


def test_questions_of_one_corpus_parse_a_repeated_reference_output_once(tmp_path: Path) -> None:
    first, second = load_corpus(write(tmp_path, SHARED_OUTPUT.format(OUTPUT=CAPITAL, COLUMN="c"))).questions()
    [(first_text, first_table)] = first.reference_reading.tables.items()
    [(second_text, second_table)] = second.reference_reading.tables.items()
    outputs = [question.reference_steps[0][0]["output"] for question in (first, second)]  # type: ignore[index]
    assert outputs[0] == outputs[1] and outputs[0] is not outputs[1]  # two texts in the file ...
    assert first_text is second_text  # ... met once by the corpus's memo (hashed once) ...
    assert second_table is first_table  # ... one parse
    assert first_table.column("c") == ("Oslo",)
    # Each question still checks its own step against the shared table, and says where.
    missing = load_corpus(write(tmp_path, SHARED_OUTPUT.format(OUTPUT=CAPITAL, COLUMN="x"))).questions()
    assert [question.reference_problems for question in missing] == [
        (
            f"reference_steps[0][0] (line {line}): 'required_columns' names 'x', which the reference result "
            "does not have (its variables: c)",
        )
        for line in (6, 13)
    ]
    # An unreadable output is reported for every question that has it, not only the first.
    broken = load_corpus(write(tmp_path, SHARED_OUTPUT.format(OUTPUT="[1, 2]", COLUMN="c"))).questions()
    problems = [question.reference_problems for question in broken]
    assert len(problems) == 2 and all(
        len(found) == 1 and "must be a JSON object" in found[0] for found in problems
    )
    assert problems[0][0].startswith("reference_steps[0][0] (line 6)")
    assert problems[1][0].startswith("reference_steps[0][0] (line 13)")
    # Questions built in memory, one by one, read on their own.
    alone = corpus_from_data([{"template_id": "t", "questions": [{"id": "q", "question_text": "?"}]}])
    assert next(iter(alone.questions())).shared_tables == {}


def test_in_memory_data_has_no_file_but_still_ids() -> None:
    with pytest.raises(CorpusError, match="template 't', question 'q', field 'question_text': is missing"):
        corpus_from_data([{"template_id": "t", "questions": [{"id": "q"}]}])
    with pytest.raises(CorpusError, match="a corpus must be a list of templates"):
        corpus_from_data({"not": "a corpus"})


def test_scoring_reads_a_question_without_keeping_the_reading() -> None:
    """A library run over thousands of questions would otherwise leave a reading per question for the
    garbage collector to walk in every full collection."""
    from pytest_graphrag_eval import run_evaluation

    output = (
        '{"head": {"vars": ["c"]}, "results": {"bindings": [{"c": {"type": "literal", "value": "Oslo"}}]}}'
    )
    step = {"name": "sparql_query", "output": output, "output_media_type": "application/sparql-results+json"}
    corpus = corpus_from_data(
        [{"template_id": "t", "questions": [{"id": "q", "question_text": "?", "reference_steps": [[step]]}]}]
    )
    actual = {**step, "status": "success"}
    assert run_evaluation(corpus, {"q": {"actual_steps": [actual]}})[0]["steps_score"] == 1.0
    question = next(iter(corpus.questions()))
    assert "_reading" not in vars(question)
    assert question.reference_reading is question.reference_reading  # the property still keeps its reading
