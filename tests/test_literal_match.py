"""Plain and typed literals: a canonical numeral equals the typed number, unless `literal_match: strict`."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_support import write_corpus, write_responses

from pytest_graphrag_eval import corpus_from_data, run_evaluation
from pytest_graphrag_eval.corpus.reference_steps import reference_step_problem
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser, parse_sparql_results
from pytest_graphrag_eval.formats.terms import LITERAL_MATCHES, LiteralMatch, normalize_cell, text_term
from pytest_graphrag_eval.steps.match import sparql_output_score
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch

XSD = "http://www.w3.org/2001/XMLSchema#"
SPARQL_JSON = "application/sparql-results+json"


def plain(text: str) -> dict[str, str]:
    return {"type": "literal", "value": text}


def typed(text: str, datatype: str = "integer") -> dict[str, str]:
    return {"type": "literal", "value": text, "datatype": XSD + datatype}


def results(*cells: dict[str, str]) -> str:
    """One column `n`, one row per cell."""
    return json.dumps({"head": {"vars": ["n"]}, "results": {"bindings": [{"n": cell} for cell in cells]}})


def reference_step(*cells: dict[str, str], **fields: Any) -> dict[str, Any]:
    return {"name": "sparql_query", "output": results(*cells), "output_media_type": SPARQL_JSON, **fields}


def outcome(reference: dict[str, str], actual: dict[str, str], **fields: Any) -> float:
    return sparql_output_score(reference_step(reference, **fields), results(actual))


# A plain numeral and a typed literal of the same value: equal by default, in either direction.
SAME_NUMBER = [
    (plain("8"), typed("8")),
    (plain("8"), typed("08", "int")),
    (plain("0"), typed("-0")),
    (plain("-12"), typed("-12", "long")),
    (plain("700000"), typed("700000.0", "decimal")),
    (plain("2.5"), typed("2.50", "decimal")),
    (plain("2.5"), typed("2.5E0", "double")),
    (plain("-0.25"), typed("-0.25", "float")),
    (plain("0.33333"), typed("0.333339", "double")),  # the typed value is truncated to 5 decimals
    (plain("123456789012345678901234567890"), typed("123456789012345678901234567890")),
]

# Texts that are not the canonical numeral of the typed value stay text, so they never equal it.
OTHER_TEXT = [
    (plain("08"), typed("8")),
    (plain("+8"), typed("8")),
    (plain("-0"), typed("0")),
    (plain(" 8"), typed("8")),
    (plain("8\n"), typed("8")),
    (plain("1e3"), typed("1000")),
    (plain("1_000"), typed("1000")),
    (plain("\u0668"), typed("8")),  # ARABIC-INDIC DIGIT EIGHT: a digit, but not an ASCII numeral
    (plain("8.0"), typed("8.0", "decimal")),
    (plain("8.50"), typed("8.5", "decimal")),
    (plain(".5"), typed("0.5", "decimal")),
    (plain("0.123456"), typed("0.123456", "decimal")),  # more places than a typed value keeps
    (plain("true"), typed("true", "boolean")),
    (plain("1"), typed("1", "boolean")),
]


@pytest.mark.parametrize(("text", "number"), SAME_NUMBER)
def test_a_plain_numeral_equals_the_typed_number_in_both_directions(
    text: dict[str, str], number: dict[str, str]
) -> None:
    assert outcome(text, number) == 1.0, "plain reference, typed actual"
    assert outcome(number, text) == 1.0, "typed reference, plain actual"
    assert outcome(text, number, literal_match="value") == 1.0


@pytest.mark.parametrize(("text", "number"), SAME_NUMBER)
def test_strict_keeps_text_and_typed_numbers_apart_in_both_directions(
    text: dict[str, str], number: dict[str, str]
) -> None:
    assert outcome(text, number, literal_match="strict") == 0.0, "plain reference, typed actual"
    assert outcome(number, text, literal_match="strict") == 0.0, "typed reference, plain actual"
    assert outcome(text, text, literal_match="strict") == 1.0
    assert outcome(number, number, literal_match="strict") == 1.0


@pytest.mark.parametrize(("text", "value"), OTHER_TEXT)
def test_other_texts_never_equal_a_typed_value(text: dict[str, str], value: dict[str, str]) -> None:
    for literal_match in LITERAL_MATCHES:
        assert outcome(text, value, literal_match=literal_match) == 0.0
        assert outcome(value, text, literal_match=literal_match) == 0.0


def test_numerals_compare_by_value_within_a_row_and_across_columns() -> None:
    reference = reference_step(plain("8"), plain("2.5"), plain("Oslo"), required_columns=["n"])
    actual = results(typed("2.50", "decimal"), plain("Oslo"), typed("8"))
    assert sparql_output_score(reference, actual) == 1.0
    assert sparql_output_score({**reference, "literal_match": "strict"}, actual) == 0.0


# Text cells: plain, language-tagged, xsd:string, an unknown datatype, an IRI. All compare by their text.
TEXT_CELLS = [
    plain,
    lambda text: {"type": "literal", "value": text, "xml:lang": "en"},
    lambda text: typed(text, "string"),
    lambda text: typed(text, "gYear"),
    lambda text: {"type": "uri", "value": text},
]
numeral_like = st.from_regex(r"-?\+?[0-9]{0,3}(\.[0-9]{0,7})?([eE]-?[0-9])?", fullmatch=True)
texts = st.one_of(numeral_like, st.text(max_size=8), st.sampled_from(["8", "08", "8.0", "8.5", "-0", "0"]))


@settings(max_examples=500, deadline=None)
@given(
    texts, texts, st.sampled_from(TEXT_CELLS), st.sampled_from(TEXT_CELLS), st.sampled_from(LITERAL_MATCHES)
)
def test_two_texts_are_equal_only_when_they_are_the_same_text(
    a: str, b: str, make_a: Any, make_b: Any, literal_match: LiteralMatch
) -> None:
    left, right = normalize_cell(make_a(a), literal_match), normalize_cell(make_b(b), literal_match)
    assert (left == right) is (a == b)
    if left == right:
        assert hash(left) == hash(right)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_every_integer_has_one_plain_numeral_equal_to_its_typed_literal(number: int) -> None:
    text = str(number)
    assert text_term(text) == number == normalize_cell(typed(text))
    assert normalize_cell(plain(text), "strict") == text


@settings(max_examples=300, deadline=None)
@given(st.decimals(places=5, allow_nan=False, allow_infinity=False, min_value=-(10**9), max_value=10**9))
def test_every_decimal_of_five_places_has_one_plain_numeral_equal_to_its_typed_literal(
    number: Decimal,
) -> None:
    whole = number == number.to_integral_value()
    text = str(int(number)) if whole else format(number.normalize(), "f")
    assert normalize_cell(plain(text)) == number == normalize_cell(typed(text, "decimal"))
    assert normalize_cell(plain(text)) == normalize_cell(typed(format(number, "f"), "double"))


def test_the_parser_caches_each_literal_match_apart() -> None:
    text = results(plain("8"))
    parse = MemoizedParser()
    assert parse(text).columns == ((8,),)
    assert parse(text, "strict").columns == (("8",),)
    assert parse(text).columns == ((8,),), "the strict parse did not replace the default one"
    strict_only = results(plain("9"))
    parse(strict_only, "strict")
    assert set(parse.tables()) == {text}, "known tables are default-mode tables only"
    known = MemoizedParser({text: parse_sparql_results(text)})
    assert known(text, "strict").columns == (("8",),), "a known default table is not used for strict"


def _question(question_id: str, step: dict[str, Any]) -> dict[str, Any]:
    return {"id": question_id, "question_text": "How many?", "reference_steps": [[step]]}


def _response(*cells: dict[str, str]) -> dict[str, Any]:
    return {
        "actual_answer": "8",
        "actual_steps": [{"name": "sparql_query", "status": "success", "output": results(*cells)}],
    }


def test_run_evaluation_follows_each_steps_literal_match() -> None:
    # Both questions share the reference text, so a table cached for one must not serve the other.
    corpus = corpus_from_data(
        [
            {
                "template_id": "counts",
                "questions": [
                    _question("value", reference_step(plain("8"))),
                    _question("strict", reference_step(plain("8"), literal_match="strict")),
                    _question("strict-typed", reference_step(typed("8"), literal_match="strict")),
                ],
            }
        ]
    )
    responses = {
        "value": _response(typed("8")),
        "strict": _response(typed("8")),
        "strict-typed": _response(plain("8")),
    }
    scored = {result["question_id"]: result for result in run_evaluation(corpus, responses)}
    assert scored["value"]["steps_score"] == 1.0 and scored["value"]["steps_result_f1"] == 1.0
    for question_id in ("strict", "strict-typed"):
        assert scored[question_id]["steps_score"] == 0.0
        assert scored[question_id]["steps_result_f1"] == 0.0


def test_the_mismatch_explanation_follows_the_literal_match() -> None:
    assert explain_sparql_mismatch(reference_step(plain("8")), results(typed("8")))["matched"] is True
    explained = explain_sparql_mismatch(
        reference_step(plain("8"), literal_match="strict"), results(typed("8"))
    )
    assert explained["matched"] is False
    assert explained["missing_rows"] == [{"n": "8"}] and explained["extra_rows"] == [{"n": 8}]


@pytest.mark.parametrize("bad", ["loose", True, None, ["strict"]])
def test_an_unknown_literal_match_names_the_field(bad: Any) -> None:
    problem = reference_step_problem(reference_step(plain("8"), literal_match=bad))
    assert problem == f"'literal_match' must be one of value, strict, got {bad!r}"
    corpus = corpus_from_data(
        [{"template_id": "t", "questions": [_question("q", reference_step(plain("8"), literal_match=bad))]}]
    )
    [question] = corpus.questions()
    assert question.reference_problems == (f"reference_steps[0][0]: {problem}",)


def test_the_plugin_scores_each_steps_literal_match(pytester: pytest.Pytester) -> None:
    questions = [
        _question("value", reference_step(plain("8"))),
        _question("strict", reference_step(plain("8"), literal_match="strict")),
    ]
    write_corpus(pytester, [{"template_id": "counts", "questions": questions}])
    write_responses(
        pytester,
        [{"question_id": question_id, **_response(typed("8"))} for question_id in ("value", "strict")],
    )
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-threshold",
        "steps_score>=1",
        "-v",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*counts::value PASSED*", "*counts::strict FAILED*"], consecutive=False)


@pytest.mark.parametrize(("literal_match", "status"), [("value", "fresh"), ("strict", "stale")])
def test_a_stored_plain_count_is_fresh_against_the_endpoints_typed_count(
    tmp_path: Any, literal_match: str, status: str
) -> None:
    from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint
    from pytest_graphrag_eval.graph.references import check_question

    graph = tmp_path / "graph.ttl"
    graph.write_text("<urn:a> <urn:p> 1 . <urn:b> <urn:p> 2 . <urn:c> <urn:p> 3 .\n", encoding="utf-8")
    step = reference_step(plain("3"), literal_match=literal_match)
    step["args"] = {"query": "SELECT (COUNT(?s) AS ?n) WHERE { ?s <urn:p> ?o }"}
    [question] = corpus_from_data([{"template_id": "t", "questions": [_question("q", step)]}]).questions()
    [check] = check_question(question, EmbeddedEndpoint.load(graph)).steps
    assert check.status == status
    if status == "stale":
        assert check.changes["rows_removed"] == [{"n": "3"}] and check.changes["rows_added"] == [{"n": 3}]
