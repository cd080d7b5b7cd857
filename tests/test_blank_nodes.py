"""Blank nodes in SELECT results: equal up to one consistent renaming, with no engine involved.

A blank-node label is local to its result document (SPARQL 1.1 results equivalence), so results that
differ only in their labels are the same answer: the 0/1 steps score, partial credit and the failure
explanation all say so, and a renaming that is not one bijection across the whole result never does.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus.reference_steps import sparql_expectation
from pytest_graphrag_eval.formats.sparql_results import parse_sparql_results, results_table
from pytest_graphrag_eval.formats.terms import BlankNode
from pytest_graphrag_eval.steps.blank_nodes import Equivalence, equivalent_rows
from pytest_graphrag_eval.steps.match import sparql_output_score
from pytest_graphrag_eval.steps.result_overlap import sparql_overlap
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch


def bnode(label: str) -> dict[str, str]:
    return {"type": "bnode", "value": label}


def literal(value: str) -> dict[str, str]:
    return {"type": "literal", "value": value}


def results(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def step(output: str, **flags: Any) -> dict[str, Any]:
    return {
        "name": "sparql_query",
        "output_media_type": "application/sparql-results+json",
        "output": output,
        **flags,
    }


def scores(reference: str, actual: str, **flags: Any) -> tuple[float, float]:
    """(steps score, partial-credit F1) of `actual` against `reference`."""
    reference_step = step(reference, **flags)
    expected = sparql_expectation(reference_step)
    f1 = sparql_overlap(expected, parse_sparql_results(actual, expected.literal_match)).f1
    return sparql_output_score(reference_step, actual), f1


def test_the_issue_minimal_case_one_blank_node_under_another_name_and_variable() -> None:
    assert scores(results(["v"], [[bnode("b0")]]), results(["x"], [[bnode("b1")]])) == (1.0, 1.0)


def test_one_renaming_for_the_whole_result_not_one_per_cell() -> None:
    reference = results(["s", "o"], [[bnode("a"), bnode("a")]])
    steps_score, f1 = scores(reference, results(["s", "o"], [[bnode("b"), bnode("c")]]))
    assert steps_score == 0.0 and f1 < 1.0
    assert scores(reference, results(["s", "o"], [[bnode("q"), bnode("q")]])) == (1.0, 1.0)


def test_a_blank_node_never_equals_a_literal_or_iri_of_the_same_text() -> None:
    reference = results(["v"], [[bnode("b0")]])
    assert scores(reference, results(["v"], [[literal("b0")]]))[0] == 0.0
    assert scores(reference, results(["v"], [[{"type": "uri", "value": "b0"}]]))[0] == 0.0


def test_multi_column_rows_shuffled_blank_nodes_shared_across_rows() -> None:
    rows = [
        [bnode("a"), literal("1"), bnode("b")],
        [bnode("b"), literal("2"), bnode("c")],
        [bnode("c"), literal("3"), bnode("a")],
        [bnode("d"), literal("4"), literal("end")],
    ]
    renaming = {"a": "z", "b": "y", "c": "x", "d": "w"}
    relabelled = [
        [bnode(renaming[cell["value"]]) if cell["type"] == "bnode" else cell for cell in row] for row in rows
    ]
    random.Random(3).shuffle(relabelled)
    reordered = [[row[2], row[0], row[1]] for row in relabelled]  # columns moved, variables renamed
    assert scores(results(["s", "n", "o"], rows), results(["o2", "s2", "n2"], reordered)) == (1.0, 1.0)


def test_repeated_blank_node_in_a_row_must_stay_repeated() -> None:
    reference = results(
        ["s", "o", "n"], [[bnode("a"), bnode("a"), literal("1")], [bnode("b"), bnode("c"), literal("2")]]
    )
    same = results(
        ["s", "o", "n"], [[bnode("y"), bnode("z"), literal("2")], [bnode("x"), bnode("x"), literal("1")]]
    )
    swapped = results(
        ["s", "o", "n"], [[bnode("y"), bnode("y"), literal("2")], [bnode("x"), bnode("z"), literal("1")]]
    )
    assert scores(reference, same) == (1.0, 1.0)
    steps_score, f1 = scores(reference, swapped)
    assert steps_score == 0.0 and f1 < 1.0


def test_non_bijective_relabelling_two_blank_nodes_merged_into_one() -> None:
    reference = results(["v", "n"], [[bnode("a"), literal("1")], [bnode("b"), literal("2")]])
    merged = results(["v", "n"], [[bnode("z"), literal("1")], [bnode("z"), literal("2")]])
    steps_score, f1 = scores(reference, merged)
    assert steps_score == 0.0 and f1 < 1.0
    split = results(["v", "n"], [[bnode("z"), literal("1")], [bnode("y"), literal("1")]])
    assert (
        scores(results(["v", "n"], [[bnode("a"), literal("1")], [bnode("a"), literal("1")]]), split)[0] == 0.0
    )


def test_structures_colour_refinement_cannot_tell_apart_are_searched() -> None:
    """Two triangles and one hexagon of blank nodes look alike to every node's neighbourhood."""
    triangles = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f"), ("f", "d")]
    hexagon = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "a")]
    other_triangles = [("p", "r"), ("r", "q"), ("q", "p"), ("u", "w"), ("w", "v"), ("v", "u")]

    def edges(pairs: list[tuple[str, str]]) -> str:
        return results(["s", "o"], [[bnode(left), bnode(right)] for left, right in pairs])

    assert scores(edges(triangles), edges(hexagon))[0] == 0.0
    assert scores(edges(triangles), edges(other_triangles)) == (1.0, 1.0)


def test_ordered_rows_map_row_by_row() -> None:
    reference = results(["v"], [[bnode("a")], [bnode("b")], [bnode("a")]])
    assert scores(reference, results(["v"], [[bnode("x")], [bnode("y")], [bnode("x")]]), ordered=True) == (
        1.0,
        1.0,
    )
    assert (
        scores(reference, results(["v"], [[bnode("x")], [bnode("x")], [bnode("y")]]), ordered=True)[0] == 0.0
    )


def test_duplicates_count_when_asked() -> None:
    reference = results(["v"], [[bnode("a")], [bnode("a")], [bnode("b")]])
    same = results(["v"], [[bnode("y")], [bnode("x")], [bnode("x")]])
    other = results(["v"], [[bnode("y")], [bnode("x")], [bnode("z")]])
    assert scores(reference, same, ignore_duplicates=False) == (1.0, 1.0)
    assert scores(reference, other, ignore_duplicates=False)[0] == 0.0


def test_partial_credit_counts_rows_under_one_renaming() -> None:
    reference = results(["v", "n"], [[bnode(f"r{i}"), literal(str(i))] for i in range(4)])
    three = results(["v", "n"], [[bnode(f"a{i}"), literal(str(i))] for i in range(3)])
    steps_score, f1 = scores(reference, three)
    assert steps_score == 0.0
    assert f1 == 2 * 1.0 * 0.75 / 1.75  # precision 1, recall 3/4


def test_the_explanation_shows_blank_nodes_and_says_renaming_decided() -> None:
    reference = step(results(["v", "n"], [[bnode("r1"), literal("1")], [bnode("r2"), literal("2")]]))
    matched = explain_sparql_mismatch(
        reference, results(["v", "n"], [[bnode("x"), literal("2")], [bnode("y"), literal("1")]])
    )
    assert matched["matched"] and matched["reason"] == "the rows agree up to blank-node renaming"
    differing = explain_sparql_mismatch(
        reference, results(["v", "n"], [[bnode("x"), literal("2")], [bnode("y"), literal("3")]])
    )
    assert not differing["matched"]
    assert differing["missing_rows"] == [{"v": "_:r1", "n": 1}]
    assert differing["extra_rows"] == [{"v": "_:y", "n": 3}]


def test_past_the_search_bound_the_rows_count_as_different_and_the_report_says_so() -> None:
    left = [
        (BlankNode(a), BlankNode(b))
        for a, b in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f"), ("f", "d")]
    ]
    right = [
        (BlankNode(a), BlankNode(b))
        for a, b in [("p", "r"), ("r", "q"), ("q", "p"), ("u", "w"), ("w", "v"), ("v", "u")]
    ]
    assert equivalent_rows(left, right, ordered=False, distinct=True) is Equivalence.EQUAL
    assert equivalent_rows(left, right, ordered=False, distinct=True, bound=10) is Equivalence.UNDECIDED


def test_typed_and_generic_readings_agree_on_blank_nodes() -> None:
    text = results(
        ["v", "n"],
        [
            [bnode("a"), literal("1")],
            [
                bnode("a"),
                {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
            ],
        ],
    )
    typed = parse_sparql_results(text)
    generic = results_table(json.loads(text))
    assert typed == generic and typed.blank_nodes
    assert typed.column("v") == (BlankNode("a"), BlankNode("a"))
    assert not parse_sparql_results(results(["v"], [[literal("bnode")]])).blank_nodes


# Property: any bijective relabelling plus a shuffle of rows and columns is the same answer.
labels = st.sampled_from(["a", "b", "c", "d", "e"])
cells = st.one_of(labels.map(bnode), st.sampled_from(["x", "y", "1"]).map(literal))


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.lists(cells, min_size=3, max_size=3), min_size=1, max_size=8), seed=st.integers(0, 10**6)
)
def test_property_bijective_relabelling_and_shuffles_score_one(
    rows: list[list[dict[str, str]]], seed: int
) -> None:
    rng = random.Random(seed)
    targets = [f"n{index}" for index in range(5)]
    rng.shuffle(targets)
    renaming = dict(zip(["a", "b", "c", "d", "e"], targets, strict=True))
    relabelled = [[bnode(renaming[c["value"]]) if c["type"] == "bnode" else c for c in row] for row in rows]
    rng.shuffle(relabelled)
    order = [2, 0, 1]
    moved = [[row[index] for index in order] for row in relabelled]
    assert scores(results(["p", "q", "r"], rows), results(["r", "p", "q"], moved)) == (1.0, 1.0)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.lists(cells, min_size=2, max_size=2), min_size=1, max_size=6), target=labels)
def test_property_merging_two_blank_nodes_into_one_is_never_equal(
    rows: list[list[dict[str, str]]], target: str
) -> None:
    used = sorted({c["value"] for row in rows for c in row if c["type"] == "bnode"})
    if len(used) < 2:
        return
    merged = [
        [bnode(used[0]) if c["type"] == "bnode" and c["value"] == used[1] else c for c in row] for row in rows
    ]
    steps_score, f1 = scores(results(["p", "q"], rows), results(["p", "q"], merged))
    assert steps_score == 0.0 and f1 < 1.0
