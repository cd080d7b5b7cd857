"""Bad template input: each a clear error naming the file, the template and the field, before or
instead of a corpus; the command exits 2 with the message and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from generate_support import RELEASE_1, corpus_command, transformers_by_zone
from oxigraph_server import free_port

from pytest_graphrag_eval.generate.placeholders import Pieces
from pytest_graphrag_eval.generate.templates import TemplateError, load_templates

TEMPLATE = "template 'transformers_of_substation_in_zone'"


def broken(tmp_path: Path, old: str, new: str) -> Path:
    """The test template file with `old` replaced by `new` (which must be there)."""
    path = transformers_by_zone(tmp_path)
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def failure(path: Path, capsys: pytest.CaptureFixture[str], endpoint: str = str(RELEASE_1)) -> str:
    """The command's error line for this template file (exit status 2, no corpus written)."""
    out = path.parent / "corpus.yaml"
    assert corpus_command("generate", path, "--sparql-endpoint", endpoint, "--out", out) == 2
    assert not out.exists()
    error = capsys.readouterr().err
    assert error.startswith("graphrag-eval-corpus: error: ") and "Traceback" not in error
    return error


def test_a_reference_query_that_does_not_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = broken(tmp_path, "order by ?trafoName", "order by by ?trafoName")
    error = failure(path, capsys)
    assert (
        f"templates.yaml:{_line(path, 'template_id')}, {TEMPLATE}, field 'reference_steps[1][0].args.query'"
        in error
    )
    assert "the query does not parse" in error


def test_a_candidates_query_that_does_not_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = failure(broken(tmp_path, "select ?substation ?zone", "selec ?substation ?zone"), capsys)
    assert f"{TEMPLATE}, field 'candidates': the query does not parse" in error


def test_a_parameter_no_phrasing_uses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = failure(
        broken(tmp_path, "parameters: [substation, zone]", "parameters: [substation, zone, voltage]"), capsys
    )
    assert f"{TEMPLATE}, field 'phrasings[0]': does not use the parameter 'voltage'" in error


def test_a_phrasing_naming_an_unknown_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = failure(
        broken(tmp_path, "of zone {{zone}} hold?", "of zone {{zone}} hold at {{voltage}}?"), capsys
    )
    assert f"{TEMPLATE}, field 'phrasings[1]': names {{{{voltage}}}}, which is not a parameter" in error


def test_a_candidates_query_that_returns_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = failure(
        broken(
            tmp_path,
            "?zoneIri cim:IdentifiedObject.name ?zone .",
            "?zoneIri cim:IdentifiedObject.name ?zone . filter(false)",
        ),
        capsys,
    )
    assert f"{TEMPLATE}, field 'candidates': the query returns nothing" in error


def test_an_unreachable_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    error = failure(transformers_by_zone(tmp_path), capsys, url)
    assert f"{TEMPLATE}, field 'candidates': the SPARQL endpoint cannot be reached" in error
    assert "127.0.0.1" in error


def test_a_parameter_the_candidates_query_does_not_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = failure(
        broken(tmp_path, "select ?substation ?zone ?substationIri", "select ?substation ?substationIri"),
        capsys,
    )
    assert f"{TEMPLATE}, field 'parameters': 'zone' is not a column of the candidates query" in error


def test_a_step_placeholder_the_candidates_query_does_not_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = failure(broken(tmp_path, 'output: "{{substationIri}}"', 'output: "{{substationUri}}"'), capsys)
    assert (
        f"{TEMPLATE}, field 'reference_steps[0][0]': names {{{{substationUri}}}}, which is not a column"
        in error
    )


def test_an_answer_column_the_query_does_not_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = failure(broken(tmp_path, "answer: {labels: trafoName}", "answer: {labels: name}"), capsys)
    assert f"{TEMPLATE}, field 'answer.labels': 'name' is not a column of the answer step's result" in error


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            "answer: {labels: trafoName}",
            "answer: {labels: trafoName, count: true}",
            "answer",
            "exactly one of",
        ),
        ("    phrasings:\n", "    questions: []\n    phrasings:\n", None, "unknown key(s) 'questions'"),
        ("order by ?substation\n", "order by ?substation\n    sample: {count: 0}\n", "sample.count", ">= 1"),
        (
            "order by ?substation\n",
            "order by ?substation\n    sample: {stratify: voltage}\n",
            "sample.stratify",
            "one of the parameters",
        ),
        (
            "order by ?substation\n",
            "order by ?substation\n    keep: {min_rows: 3, max_rows: 2}\n",
            "keep.max_rows",
            "at least min_rows",
        ),
        (
            '          output: "{{substationIri}}"\n',
            '          output: "{{substationIri}}"\n'
            "      - - name: sparql_query\n          args: {query: 'ask {}'}\n          output: x\n",
            "reference_steps[1][0].output",
            "leave it out",
        ),
    ],
)
def test_template_mistakes_found_before_any_query(
    tmp_path: Path, old: str, new: str, field: str | None, message: str
) -> None:
    with pytest.raises(TemplateError) as raised:
        load_templates(broken(tmp_path, old, new))
    assert (
        raised.value.field == field
        and raised.value.location.template_id == "transformers_of_substation_in_zone"
    )
    assert message in str(raised.value)


def test_invalid_yaml_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "templates.yaml"
    path.write_text("templates:\n  - template_id: [unclosed\n", encoding="utf-8")
    assert "templates.yaml:3: invalid YAML" in failure(path, capsys)


def test_bad_placeholder_values_never_change_a_query(tmp_path: Path) -> None:
    hostile = {"name": {"type": "literal", "value": 'x" } ; drop all ; select * { "'}}
    filled = Pieces.of("select * { ?s ?p {{name}} }").fill_query(hostile)
    assert filled == 'select * { ?s ?p "x\\" } ; drop all ; select * { \\"" }'


def _line(path: Path, key: str) -> int:
    return next(number for number, line in enumerate(path.read_text("utf-8").splitlines(), 1) if key in line)


@pytest.mark.parametrize("id_pattern", [True, False], ids=["id-pattern", "hashed-id"])
def test_a_candidate_row_leaving_a_parameter_unbound_is_dropped_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], id_pattern: bool
) -> None:
    """An OPTIONAL candidate column may be unbound in some rows; a value answer naming the same
    parameter as the phrasings must not hide that the phrasings need it."""
    path = broken(
        tmp_path,
        "        ?zoneIri cim:IdentifiedObject.name ?zone .\n",
        '        optional { ?zoneIri cim:IdentifiedObject.name ?zone . filter(?substation != "SAUDA") }\n',
    )
    text = path.read_text("utf-8").replace("answer: {labels: trafoName}", "answer: {value: '{{zone}}'}")
    if not id_pattern:
        text = text.replace("    question_id: trafos-{{zone}}-{{substation}}\n", "")
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", path, "--sparql-endpoint", RELEASE_1, "--out", out) == 0
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    assert ": no value for zone in its candidate row" in printed.out
    assert "SAUDA" not in out.read_text("utf-8")


def test_an_id_pattern_giving_two_questions_one_id_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two values the slug makes alike ('A B', 'a-b') are two questions, not a duplicate: counting one
    as a duplicate would drop a question the graph supports without saying why."""
    graph = tmp_path / "graph.ttl"
    graph.write_text(
        "@prefix ex: <http://example.org/> .\n"
        'ex:one ex:name "A B" ; ex:val 1 .\nex:two ex:name "a-b" ; ex:val 2 .\n'
        'ex:three ex:name "a-b" ; ex:val 2 .\n',
        encoding="utf-8",
    )
    path = tmp_path / "templates.yaml"
    path.write_text(
        "prefixes: {ex: 'http://example.org/'}\ntemplates:\n  - template_id: value_of\n"
        "    parameters: [name]\n    candidates: 'select distinct ?name where { ?t ex:name ?name }'\n"
        "    phrasings: ['What is the value of {{name}}?']\n    question_id: value-{{name}}\n"
        "    reference_steps:\n      - - name: sparql_query\n"
        "          args: {query: 'select ?val where { ?t ex:name {{name}} ; ex:val ?val }'}\n"
        "    answer: {labels: val}\n",
        encoding="utf-8",
    )
    error = failure(path, capsys, str(graph))
    assert "template 'value_of', field 'question_id': gives the question id 'value-a-b'" in error
    assert "'value-A B'" in error and "'value-a-b'" in error


def test_one_value_in_two_candidate_rows_is_a_duplicate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = tmp_path / "graph.ttl"
    graph.write_text(
        '@prefix ex: <http://example.org/> .\nex:one ex:name "a-b" ; ex:val 1 .\nex:two ex:name "a-b" .\n',
        encoding="utf-8",
    )
    path = tmp_path / "templates.yaml"
    path.write_text(
        "prefixes: {ex: 'http://example.org/'}\ntemplates:\n  - template_id: value_of\n"
        "    parameters: [name]\n    candidates: 'select ?name ?t where { ?t ex:name ?name }'\n"
        "    phrasings: ['What is the value of {{name}}?']\n    question_id: value-{{name}}\n"
        "    reference_steps:\n      - - name: sparql_query\n"
        "          args: {query: 'select ?val where { ?t ex:name {{name}} ; ex:val ?val }'}\n"
        "    answer: {labels: val}\n",
        encoding="utf-8",
    )
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", path, "--sparql-endpoint", graph, "--out", out) == 0
    assert "value_of: 1 questions from 2 candidates, 1 duplicates dropped" in capsys.readouterr().out


def test_an_out_that_is_the_template_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = transformers_by_zone(tmp_path)
    before = path.read_bytes()
    assert corpus_command("generate", path, "--sparql-endpoint", RELEASE_1, "--out", path) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and f"--out and the template file name one file, {path}" in error
    assert path.read_bytes() == before


def test_a_hand_written_corpus_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A question with no provenance was written by hand: regenerating onto its file would lose it."""
    path = transformers_by_zone(tmp_path)
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", path, "--sparql-endpoint", RELEASE_1, "--out", out) == 0
    generated = out.read_text("utf-8")
    hand_written = (
        "- template_id: mine\n  questions:\n  - id: my-question\n    question_text: Who wrote this?\n"
        "    reference_answer: I did\n"
    )
    out.write_text(generated + hand_written, encoding="utf-8")
    capsys.readouterr()
    assert corpus_command("generate", path, "--sparql-endpoint", RELEASE_1, "--out", out) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert "corpus.yaml:" in error and "question 'my-question'" in error and "no provenance" in error
    assert out.read_text("utf-8") == generated + hand_written


@pytest.mark.parametrize(
    ("written", "named"),
    [
        ("    thresholds: steps_score at least 1\n", "field 'thresholds[0]': invalid threshold"),
        ("    thresholds: 5\n", "field 'thresholds': must be a list of expressions"),
        (
            "    question_thresholds: {trafos-no1-hamar: [steps_score>=]}\n",
            "question 'trafos-no1-hamar', field 'thresholds[0]': invalid threshold",
        ),
    ],
)
def test_a_threshold_that_does_not_parse_is_refused_before_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, named: str
) -> None:
    """Thresholds are copied into the corpus: one that does not parse would fail every later test run."""
    answer = "    answer: {labels: trafoName}\n"
    path = broken(tmp_path, answer, answer + written)
    assert f"{TEMPLATE}, {named}" in failure(path, capsys)


def test_question_thresholds_naming_no_generated_question_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken(
        tmp_path,
        "    answer: {labels: trafoName}\n",
        "    answer: {labels: trafoName}\n    question_thresholds:\n"
        "      trafos-no1-hamar: [steps_score>=1]\n      trafos-no9-nowhere: [steps_score>=1]\n",
    )
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", path, "--sparql-endpoint", RELEASE_1, "--out", out) == 0
    printed = capsys.readouterr().out
    assert "  question_thresholds of no question made: trafos-no9-nowhere\n" in printed
    assert "trafos-no1-hamar" not in printed.split("question_thresholds of no question made:")[1]


def test_graph_text_in_the_dry_run_is_printed_as_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name in the graph is untrusted text: an escape sequence or a line break in it must neither
    write to the terminal nor forge a line of the listing."""
    graph = tmp_path / "graph.ttl"
    graph.write_text(
        '@prefix ex: <http://example.org/> .\nex:one ex:name "red\\u001b[31m\\nforged: line" ; ex:val 1 .\n',
        encoding="utf-8",
    )
    path = tmp_path / "templates.yaml"
    path.write_text(
        "prefixes: {ex: 'http://example.org/'}\ntemplates:\n  - template_id: value_of\n"
        "    parameters: [name]\n    candidates: 'select ?name where { ?t ex:name ?name }'\n"
        "    phrasings: ['What is the value of {{name}}?']\n    reference_steps:\n"
        "      - - name: sparql_query\n"
        "          args: {query: 'select ?val where { ?t ex:name {{name}} ; ex:val ?val }'}\n"
        "    answer: {labels: val}\n",
        encoding="utf-8",
    )
    assert corpus_command("generate", path, "--sparql-endpoint", graph, "--dry-run") == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\nforged" not in printed
    assert ": What is the value of red\\x1b[31m\\nforged: line?\n" in printed


def test_a_row_dropped_for_a_blank_node_is_not_counted_as_a_keep_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = tmp_path / "graph.ttl"
    graph.write_text(
        '@prefix ex: <http://example.org/> .\nex:one ex:name "one" ; ex:val 1 .\n'
        '_:b ex:name "two" ; ex:val 2 .\n',
        encoding="utf-8",
    )
    path = tmp_path / "templates.yaml"
    path.write_text(
        "prefixes: {ex: 'http://example.org/'}\ntemplates:\n  - template_id: value_of\n"
        "    parameters: [name]\n    candidates: 'select ?name ?t where { ?t ex:name ?name }'\n"
        "    phrasings: ['What is the value of {{name}}?']\n    reference_steps:\n"
        "      - - name: sparql_query\n          args: {query: 'select ?val where { {{t}} ex:val ?val }'}\n"
        "    answer: {labels: val}\n",
        encoding="utf-8",
    )
    assert corpus_command("generate", path, "--sparql-endpoint", graph, "--out", tmp_path / "out.yaml") == 0
    printed = capsys.readouterr().out
    assert "value_of: 1 questions from 2 candidates, 1 dropped\n" in printed
    assert "is a blank node, which a query cannot name" in printed


@pytest.mark.parametrize(("key", "column"), [("id", "doc"), ("text", "body")])
def test_a_documents_column_the_query_does_not_give_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, column: str
) -> None:
    """A typo in `documents.id` made every question's relevant documents an empty list, unsaid."""
    columns = {"id": "trafo", "text": "trafoName", key: column}
    path = broken(
        tmp_path,
        '          output: "{{substationIri}}"\n',
        '          output: "{{substationIri}}"\n        - name: retrieval\n          documents:\n'
        "            query: 'select ?trafo ?trafoName where { ?trafo cim:Equipment.EquipmentContainer "
        "{{substationIri}} ; cim:IdentifiedObject.name ?trafoName }'\n"
        f"            id: {columns['id']}\n            text: {columns['text']}\n",
    )
    error = failure(path, capsys)
    assert f"{TEMPLATE}, question 'trafos-" not in error  # a template's mistake, whichever question met it
    assert f"{TEMPLATE}, field 'reference_steps[0][1].documents.{key}': '{column}' is not a column" in error


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("select ?substation ?zone ?substationIri where {", "ask {", "candidates"),
        (
            '          output: "{{substationIri}}"\n',
            '          output: "{{substationIri}}"\n        - name: retrieval\n          documents:\n'
            "            query: 'construct { ?t a cim:PowerTransformer } where { ?t a ?c }'\n"
            "            id: t\n            text: t\n",
            "reference_steps[0][1].documents.query",
        ),
    ],
)
def test_a_query_whose_rows_are_read_must_be_a_select(tmp_path: Path, old: str, new: str, field: str) -> None:
    """Candidates and documents are read from rows: a CONSTRUCT's triples ended in a JSON traceback."""
    with pytest.raises(TemplateError) as raised:
        load_templates(broken(tmp_path, old, new))
    assert raised.value.field == field and "must be a SELECT query" in str(raised.value)
