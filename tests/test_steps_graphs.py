"""CONSTRUCT and DESCRIBE outputs compared as RDF graphs: equal up to blank-node renaming."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval import run_evaluation
from pytest_graphrag_eval.corpus.reference_steps import reference_step_problem
from pytest_graphrag_eval.formats.rdf_graphs import RdfGraphError, parse_rdf_graph
from pytest_graphrag_eval.report.step_explanations import explain_step_mismatch
from pytest_graphrag_eval.steps.graph_compare import explain_graph_mismatch
from pytest_graphrag_eval.steps.match import step_match_score

ROOT = Path(__file__).resolve().parents[1]
NT = "application/n-triples"
TURTLE = "text/turtle"
JSON_LD = "application/ld+json"
EX = "http://example.org/grid#"

DESCRIBE_T1 = f"""@prefix ex: <{EX}> .
ex:T1 a ex:PowerTransformer ;
    ex:name "OSLO T1"@en ;
    ex:ratedPower 40.5 ;
    ex:location [ ex:lat 59.91 ; ex:lon 10.75 ] ;
    ex:windings ( ex:W1 ex:W2 ) .
"""


def graph_step(output: str, media: str = TURTLE, **extra: Any) -> dict[str, Any]:
    return {"name": "sparql_query", "output": output, "output_media_type": media, **extra}


def actual(output: Any, step_id: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"id": step_id, "name": "sparql_query", "status": "success", "output": output, **extra}


def as_ntriples(turtle: str, *, shuffle_seed: int | None = None, rename: str = "n") -> str:
    """The Turtle graph as N-Triples, blank nodes renamed `_:<rename><i>`, lines optionally shuffled."""
    quads = list(pyoxigraph.parse(turtle, format=pyoxigraph.RdfFormat.TURTLE))
    names: dict[str, str] = {}

    def term(node: Any) -> str:
        if isinstance(node, pyoxigraph.BlankNode):
            return "_:" + names.setdefault(node.value, f"{rename}{len(names)}")
        return str(node)

    lines = [f"{term(q.subject)} {q.predicate} {term(q.object)} ." for q in quads]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(lines)
    return "\n".join(lines) + "\n"


def score(reference: dict[str, Any], step: dict[str, Any]) -> float:
    assert reference_step_problem(reference) is None
    return step_match_score(reference, step)


# --- isomorphism -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_same_graph_in_other_syntax_order_and_blank_node_names_matches(seed: int) -> None:
    ntriples = as_ntriples(DESCRIBE_T1, shuffle_seed=seed, rename=f"agent{seed}x")
    assert "_:agent" in ntriples
    assert score(graph_step(DESCRIBE_T1), actual(ntriples)) == 1.0
    assert score(graph_step(ntriples, NT), actual(DESCRIBE_T1, output_media_type=TURTLE)) == 1.0


def test_json_ld_output_matches_the_turtle_reference() -> None:
    json_ld = json.dumps(
        [
            {
                "@id": EX + "S1",
                EX + "name": [{"@value": "OSLO"}],
                EX + "zone": [{"@id": "_:z"}],
            },
            {"@id": "_:z", EX + "code": [{"@value": "NO1"}]},
        ]
    )
    turtle = f'<{EX}S1> <{EX}name> "OSLO" ; <{EX}zone> [ <{EX}code> "NO1" ] .'
    assert score(graph_step(turtle), actual(json_ld, output_media_type=JSON_LD)) == 1.0


def test_string_comparison_would_fail_where_the_graph_comparison_matches() -> None:
    """graphrag-eval 6.6.1 compares these outputs as identical strings; a renamed blank node breaks that."""
    reference = as_ntriples(DESCRIBE_T1, rename="a")
    renamed = as_ntriples(DESCRIBE_T1, rename="b")
    assert reference != renamed
    assert score(graph_step(reference, NT), actual(renamed)) == 1.0


def test_a_triple_stated_twice_is_in_the_graph_once() -> None:
    twice = "_:a <urn:p> _:b . _:a <urn:p> _:b . _:b <urn:q> _:c . _:c <urn:r> 1 ."
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    once = f'_:x <urn:p> _:y .\n_:y <urn:q> _:z .\n_:z <urn:r> "1"^^{integer} .\n'
    assert score(graph_step(twice), actual(once, output_media_type=NT)) == 1.0
    assert score(graph_step(once, NT), actual(twice, output_media_type=TURTLE)) == 1.0


def test_symmetric_blank_nodes_are_compared_by_canonicalization() -> None:
    """Two interchangeable blank nodes cannot be told apart by their neighbourhoods: RDFC-1.0 decides."""
    reference = "_:r <urn:p> _:a . _:r <urn:p> _:b . _:a <urn:v> _:b . _:b <urn:v> _:a ."
    same = "_:x <urn:p> _:y . _:x <urn:p> _:z . _:z <urn:v> _:y . _:y <urn:v> _:z ."
    other = "_:x <urn:p> _:y . _:x <urn:p> _:z . _:z <urn:v> _:y . _:y <urn:v> _:y ."
    assert score(graph_step(reference), actual(same)) == 1.0
    assert score(graph_step(reference), actual(other)) == 0.0


# Random graphs: a few blank nodes and IRIs, so blank nodes often share neighbourhoods.
_nodes = st.sampled_from(["_:b0", "_:b1", "_:b2", "_:b3", "<urn:i0>", "<urn:i1>"])
_objects = st.one_of(_nodes, st.sampled_from(['"x"', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>']))
_triples = st.lists(
    st.tuples(_nodes, st.sampled_from(["<urn:p>", "<urn:q>"]), _objects), min_size=0, max_size=10, unique=True
)


def _text(triples: list[tuple[str, str, str]], mapping: dict[str, str] | None = None) -> str:
    def name(term: str) -> str:
        return (mapping or {}).get(term, term)

    return "".join(f"{name(s)} {p} {name(o)} .\n" for s, p, o in triples)


@settings(max_examples=150, deadline=None)
@given(
    triples=_triples, permutation=st.permutations(["_:b0", "_:b1", "_:b2", "_:b3"]), seed=st.integers(0, 99)
)
def test_property_renaming_blank_nodes_and_reordering_keeps_the_graph(
    triples: list[tuple[str, str, str]], permutation: list[str], seed: int
) -> None:
    renamed = dict(
        zip(["_:b0", "_:b1", "_:b2", "_:b3"], [f"_:other{p[3:]}" for p in permutation], strict=True)
    )
    shuffled = random.Random(seed).sample(triples, len(triples))
    reference = graph_step(_text(triples), NT)
    assert score(reference, actual(_text(shuffled, renamed))) == 1.0


@settings(max_examples=150, deadline=None)
@given(left=_triples, right=_triples)
def test_property_graph_equality_agrees_with_whole_graph_canonicalization(
    left: list[tuple[str, str, str]], right: list[tuple[str, str, str]]
) -> None:
    """Our verdict equals pyoxigraph's own whole-graph canonicalization (an independent oracle)."""

    def canonical(text: str) -> pyoxigraph.Dataset:
        dataset = pyoxigraph.Dataset(pyoxigraph.parse(text, format=pyoxigraph.RdfFormat.N_TRIPLES))
        dataset.canonicalize(pyoxigraph.CanonicalizationAlgorithm.RDFC_1_0)
        return dataset

    expected = canonical(_text(left)) == canonical(_text(right))
    assert score(graph_step(_text(left), NT), actual(_text(right))) == float(expected)


# --- non-isomorphic graphs and their difference ----------------------------------------------------


def test_a_changed_triple_is_listed_as_missing_and_extra() -> None:
    reference = graph_step(DESCRIBE_T1)
    changed = DESCRIBE_T1.replace('"OSLO T1"@en', '"OSLO T9"@en').replace("ex:lon 10.75", "ex:lon 10.76")
    assert score(reference, actual(changed)) == 0.0
    explanation = explain_graph_mismatch(reference, actual(changed))
    assert explanation["matched"] is False
    # The name triple, and the location group: the triple linking T1 to the blank node and its two triples.
    assert explanation["reason"] == "4 missing triple(s) and 4 extra triple(s)"
    assert explanation["reference_triple_count"] == explanation["actual_triple_count"] == 11
    assert f'<{EX}T1> <{EX}name> "OSLO T1"@en .' in explanation["missing_triples"]
    assert f'<{EX}T1> <{EX}name> "OSLO T9"@en .' in explanation["extra_triples"]
    # The location's blank node changed: its whole group is listed, under a label of its own per side.
    decimal = "^^<http://www.w3.org/2001/XMLSchema#decimal>"
    assert f'_:m1b0 <{EX}lon> "10.75"{decimal} .' in explanation["missing_triples"]
    assert f'_:x1b0 <{EX}lon> "10.76"{decimal} .' in explanation["extra_triples"]
    # The windings list (another blank-node group) is the same and is not listed.
    assert not any("W1" in line for line in explanation["missing_triples"] + explanation["extra_triples"])


def test_a_duplicated_blank_node_group_is_not_the_same_graph() -> None:
    one = "<urn:s> <urn:p> _:a . _:a <urn:v> 1 ."
    two = one + " <urn:s> <urn:p> _:b . _:b <urn:v> 1 ."
    assert score(graph_step(one), actual(two)) == 0.0
    explanation = explain_graph_mismatch(graph_step(one), actual(two))
    assert explanation["extra_triples_total"] == 2 and explanation["missing_triples_total"] == 0


def test_failure_lines_list_missing_and_extra_triples() -> None:
    reference = graph_step(f'<{EX}S1> <{EX}zone> "NO1" . <{EX}S1> <{EX}name> "OSLO" .')
    moved = actual(f'<{EX}S1> <{EX}zone> "NO2" . <{EX}S1> <{EX}name> "OSLO" .', "q7")
    lines = explain_step_mismatch(reference, [moved])
    assert lines == [
        "closest actual step: q7 — 1 missing triple(s) and 1 extra triple(s)",
        "triples: reference 2, actual 2",
        "missing triples (1):",
        f'  - <{EX}S1> <{EX}zone> "NO1" .',
        "extra triples (1):",
        f'  - <{EX}S1> <{EX}zone> "NO2" .',
    ]


# --- bad RDF ----------------------------------------------------------------------------------------


def test_reference_output_that_does_not_parse_is_a_reference_problem() -> None:
    problem = reference_step_problem(graph_step("ex:a ex:b ex:c ."))
    assert problem is not None and "'output' is not valid Turtle" in problem and "line 1" in problem


def test_bad_rdf_from_the_agent_scores_0_and_names_question_and_step() -> None:
    corpus = [
        {
            "template_id": "describe",
            "questions": [
                {
                    "id": "q-t1",
                    "question_text": "Describe T1",
                    "reference_steps": [[graph_step(DESCRIBE_T1)]],
                }
            ],
        }
    ]
    truncated = DESCRIBE_T1[:60]
    responses = {"q-t1": {"actual_answer": "", "actual_steps": [actual(truncated, "call-3")]}}
    (result,) = run_evaluation(corpus, responses)
    assert result["steps_score"] == 0.0
    assert result["steps_result_f1"] == 0.0
    error = result["steps_output_error"]
    assert error.startswith("question 'q-t1' (template 'describe'): actual step 'call-3' (actual_steps[0]")
    assert "is not valid Turtle" in error and "line" in error
    lines = explain_step_mismatch(graph_step(DESCRIBE_T1), [actual(truncated, "call-3")])
    assert lines[0].startswith("closest actual step: call-3 — the actual output is not valid Turtle")


def test_parse_errors_name_line_and_column() -> None:
    with pytest.raises(RdfGraphError, match=r"not valid N-Triples: .*line 2"):
        parse_rdf_graph('<urn:a> <urn:b> "c" .\n<urn:a> <urn:b> .\n', NT)
    with pytest.raises(RdfGraphError, match="must be text"):
        parse_rdf_graph({"@id": "urn:a"}, JSON_LD)


def test_without_pyoxigraph_a_graph_step_is_that_questions_error_naming_the_extra(tmp_path: Path) -> None:
    """pyoxigraph is optional ([rdf]); without it the question says how to install it, nothing is scored."""
    script = tmp_path / "no_pyoxigraph.py"
    script.write_text(
        "import sys\n"
        "sys.modules['pyoxigraph'] = None  # as if it were not installed\n"
        "from pytest_graphrag_eval import run_evaluation\n"
        "step = {'name': 'sparql_query', 'output': '<urn:a> <urn:b> <urn:c> .',"
        " 'output_media_type': 'application/n-triples'}\n"
        "corpus = [{'template_id': 't', 'questions': [{'id': 'q', 'question_text': '?',"
        " 'reference_steps': [[step]]}]}]\n"
        "actual = dict(step, status='success', id='s1')\n"
        "(result,) = run_evaluation(corpus, {'q': {'actual_answer': '', 'actual_steps': [actual]}})\n"
        "print(result.get('steps_score'), result['steps_score_error'])\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.startswith(
        "None invalid reference steps: reference_steps[0][0]: 'output_media_type' application/n-triples: "
    )
    assert "needs pyoxigraph: pip install -e 'path/to/pytest-graphrag-eval[rdf]'" in done.stdout
