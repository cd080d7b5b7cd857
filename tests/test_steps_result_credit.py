"""Partial credit: steps_result_precision / recall / f1 over SPARQL rows and graph triples."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_steps_sparql_properties import modes, select, step, tables

from pytest_graphrag_eval import run_evaluation
from pytest_graphrag_eval.corpus.reference_steps import sparql_expectation
from pytest_graphrag_eval.formats.sparql_results import parse_sparql_results
from pytest_graphrag_eval.steps.groups import score_steps
from pytest_graphrag_eval.steps.result_credit import result_credit
from pytest_graphrag_eval.steps.result_overlap import (
    FULL,
    NONE,
    Overlap,
    _BestMapping,
    longest_common_subsequence,
    one_column_overlap,
    sparql_overlap,
)
from pytest_graphrag_eval.steps.sparql_compare import RowMode

TURTLE = "text/turtle"


def overlap(reference: tuple, actual: tuple, required: list[str] | None = None, **flags: Any) -> Overlap:
    expected = sparql_expectation(step(*reference, required, **flags))
    return sparql_overlap(expected, parse_sparql_results(select(*actual)))


def brute_force_f1(reference: tuple, actual: tuple, required: list[str], flags: dict[str, Any]) -> float:
    """The specification: the best F1 over every one-to-one column mapping, by plain counting."""
    ref_table, act_table = parse_sparql_results(select(*reference)), parse_sparql_results(select(*actual))
    if len(required) > len(act_table.variables):
        return 0.0
    indices = [ref_table.variables.index(name) for name in required]
    expected = [tuple(row[index] for index in indices) for row in ref_table.rows]
    best = 0.0
    for mapping in itertools.permutations(range(len(act_table.variables)), len(required)):
        projected = [tuple(row[index] for index in mapping) for row in act_table.rows]
        if flags.get("ordered"):
            ref_size, act_size = len(expected), len(projected)
            shared = _lcs(expected, projected)
        elif flags.get("ignore_duplicates") is False:
            ref_size, act_size = len(expected), len(projected)
            shared = sum((Counter(expected) & Counter(projected)).values())
        else:
            ref_size, act_size = len(set(expected)), len(set(projected))
            shared = len(set(expected) & set(projected))
        if ref_size == act_size == 0:
            return 1.0
        if shared:
            best = max(best, 2 * shared / (ref_size + act_size))
    return best


def _lcs(left: list[Any], right: list[Any]) -> int:
    """Textbook dynamic programme, the oracle for the Hunt-Szymanski version."""
    table = [[0] * (len(right) + 1) for _ in range(len(left) + 1)]
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            table[i + 1][j + 1] = table[i][j] + 1 if a == b else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


# --- properties -------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(tables(), tables(), modes, st.data())
def test_property_bounds_and_f1_is_the_harmonic_mean(
    reference: tuple, actual: tuple, flags: dict, data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(reference[0]), min_size=1, unique=True))
    found = overlap(reference, actual, required, **flags)
    for value in (found.precision, found.recall, found.f1):
        assert 0.0 <= value <= 1.0
    if found.precision + found.recall:
        assert math.isclose(found.f1, 2 * found.precision * found.recall / (found.precision + found.recall))
    else:
        assert found.f1 == 0.0


@settings(max_examples=300, deadline=None)
@given(tables(), tables(), modes, st.data())
def test_property_f1_is_the_best_over_all_column_mappings(
    reference: tuple, actual: tuple, flags: dict, data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(reference[0]), min_size=1, unique=True))
    found = overlap(reference, actual, required, **flags)
    assert math.isclose(found.f1, brute_force_f1(reference, actual, required, flags), abs_tol=1e-12)


@settings(max_examples=300, deadline=None)
@given(tables(min_rows=1), modes, st.data())
def test_property_f1_is_1_exactly_when_the_rows_agree_under_a_mapping(
    reference: tuple, flags: dict, data: st.DataObject
) -> None:
    """Derived actual results (columns permuted, rows changed or dropped): F1 1.0 iff steps_score's match."""
    variables, rows = reference
    order = data.draw(st.permutations(range(len(variables))))
    derived = [tuple(row[index] for index in order) for row in rows]
    if data.draw(st.booleans()):
        derived = derived[: data.draw(st.integers(0, len(derived)))]
    if data.draw(st.booleans()) and derived:
        derived[0] = ("changed",) * len(variables)
    actual = ([f"a{index}" for index in range(len(variables))], derived)
    found = overlap(reference, actual, None, **flags)
    matched = brute_force_f1(reference, actual, list(variables), flags) == 1.0
    assert (found.f1 == 1.0) is matched
    assert (found == FULL) is matched


@settings(max_examples=200, deadline=None)
@given(tables(), tables(), st.sampled_from([{}, {"ignore_duplicates": False}]), st.randoms())
def test_property_shuffling_rows_changes_nothing_when_order_does_not_count(
    reference: tuple, actual: tuple, flags: dict, rng: Any
) -> None:
    shuffled_reference = (reference[0], rng.sample(reference[1], len(reference[1])))
    shuffled_actual = (actual[0], rng.sample(actual[1], len(actual[1])))
    assert overlap(reference, actual, None, **flags) == overlap(
        shuffled_reference, shuffled_actual, None, **flags
    )


@settings(max_examples=200, deadline=None)
@given(tables(min_rows=1), st.data())
def test_property_swapping_the_sides_swaps_precision_and_recall(
    reference: tuple, data: st.DataObject
) -> None:
    variables, rows = reference
    other = data.draw(st.lists(st.sampled_from(rows), max_size=8))
    flags = data.draw(st.sampled_from([{}, {"ignore_duplicates": False}, {"ordered": True}]))
    forward = overlap(reference, (variables, other), None, **flags)
    backward = overlap((variables, other), reference, None, **flags)
    assert math.isclose(forward.precision, backward.recall) and math.isclose(
        forward.recall, backward.precision
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(tables(max_columns=2), min_size=1, max_size=2), min_size=1, max_size=2),
    st.lists(tables(max_columns=2), max_size=3),
    st.sampled_from(["last_group", "all_groups"]),
    st.data(),
)
def test_property_the_steps_score_matches_shortcut_nothing(
    groups: list[list[tuple]], actual_tables: list[tuple], scope: str, data: st.DataObject
) -> None:
    """Credit told which steps the steps score matched equals credit computed pair by pair."""
    reference_steps = [[step(*table) for table in group] for group in groups]
    # Some actual results are copies of reference ones, so that whole groups match.
    copies = data.draw(st.lists(st.sampled_from([t for group in groups for t in group]), max_size=3))
    actual_steps = [
        _actual(select(*table), f"s{index}") for index, table in enumerate(actual_tables + copies)
    ]
    outcome = score_steps(reference_steps, actual_steps, scope)
    told = result_credit(reference_steps, actual_steps, scope, matches=outcome.matches)
    assert told == result_credit(reference_steps, actual_steps, scope)


@given(st.lists(st.integers(0, 4), max_size=12), st.lists(st.integers(0, 4), max_size=12))
def test_property_longest_common_subsequence(left: list[int], right: list[int]) -> None:
    assert longest_common_subsequence(left, right) == _lcs(left, right)


# --- conventions ---------------------------------------------------------------------------------------


def test_empty_result_conventions() -> None:
    rows = (["a"], [("x",)])
    empty = (["a"], [])
    assert overlap(empty, empty) == FULL  # as GERBIL: nothing expected, nothing returned
    assert overlap(rows, empty) == NONE  # GERBIL gives precision 1 here; we do not reward silence
    assert overlap(empty, rows) == NONE
    assert overlap(empty, ([], [])) == NONE  # too few variables: steps_score is 0 too


def test_ordered_rows_give_credit_for_the_common_subsequence() -> None:
    reference = (["a"], [("1",), ("2",), ("3",), ("4",)])
    swapped = (["a"], [("1",), ("3",), ("2",), ("4",)])
    found = overlap(reference, swapped, ordered=True)
    assert found == Overlap(0.75, 0.75, 0.75)
    assert overlap(reference, swapped) == FULL


def test_best_mapping_is_used_for_partial_rows() -> None:
    reference = (["t", "name"], [("urn:t1", "T1"), ("urn:t2", "T2"), ("urn:t3", "T3")])
    actual = (["label", "x"], [("T1", "urn:t1"), ("T2", "urn:t2"), ("T9", "urn:t9"), ("T8", "urn:t8")])
    found = overlap(reference, actual)
    assert math.isclose(found.precision, 2 / 4) and math.isclose(found.recall, 2 / 3)
    assert math.isclose(found.f1, 4 / 7)


def test_ask_scores_all_or_nothing() -> None:
    ask_true = {"name": "sparql_query", "output": '{"head": {}, "boolean": true}'}
    ask_true["output_media_type"] = "application/sparql-results+json"
    expected = sparql_expectation(ask_true)
    assert sparql_overlap(expected, parse_sparql_results('{"boolean": true}')) == FULL
    assert sparql_overlap(expected, parse_sparql_results('{"boolean": false}')) == NONE


# --- per question ----------------------------------------------------------------------------------------


def _actual(output: str, step_id: str, name: str = "sparql_query", **extra: Any) -> dict[str, Any]:
    return {"id": step_id, "name": name, "status": "success", "output": output, **extra}


def test_question_credit_is_the_mean_over_result_steps_paired_one_to_one() -> None:
    first = step(["a"], [("1",), ("2",)])
    second = step(["b"], [("x",), ("y",), ("z",), ("w",)])
    iri = {"name": "iri_discovery", "output": "urn:x"}  # not a result-bearing step: not counted
    actual_steps = [
        _actual(select(["a"], [("1",), ("2",)]), "s1"),
        _actual(select(["b"], [("x",), ("y",)]), "s2"),
    ]
    credit = result_credit([[first, second, iri]], actual_steps)
    assert credit is not None
    assert credit.precision == 1.0 and credit.recall == (1.0 + 0.5) / 2
    assert math.isclose(credit.f1, (1.0 + 2 / 3) / 2)
    # One actual step cannot serve two reference steps.
    only = result_credit([[first, step(["a"], [("1",), ("2",)])]], actual_steps[:1])
    assert only is not None and only.f1 == 0.5


def test_question_without_result_steps_gets_no_credit_keys() -> None:
    assert result_credit([[{"name": "iri_discovery", "output": "urn:x"}]], []) is None
    assert result_credit([[step(["a"], [("1",)])], [{"name": "lookup", "output": "1"}]], []) is None
    all_groups = result_credit(
        [[step(["a"], [("1",)])], [{"name": "lookup", "output": "1"}]], [], "all_groups"
    )
    assert all_groups is not None and all_groups.f1 == 0.0


def test_graph_steps_count_triples() -> None:
    reference = {
        "name": "sparql_query",
        "output_media_type": TURTLE,
        "output": "<urn:s> <urn:p> 1, 2, 3, 4 . <urn:s> <urn:q> [ <urn:r> 5 ] .",
    }
    agent = "<urn:s> <urn:p> 1, 2, 9 . <urn:s> <urn:q> [ <urn:r> 5 ] ."
    credit = result_credit([[reference]], [_actual(agent, "s1")])
    assert credit is not None
    # 6 reference triples, 5 actual ones, 4 shared (two ground triples and the two-triple blank-node group).
    assert math.isclose(credit.precision, 4 / 5) and math.isclose(credit.recall, 4 / 6)
    assert not credit.unreadable


@pytest.mark.parametrize("scope", ["last_group", "all_groups"])
def test_run_evaluation_writes_the_keys_next_to_steps_score(scope: str) -> None:
    corpus = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "q1",
                    "question_text": "Which transformers?",
                    "reference_steps": [[step(["t"], [("urn:t1",), ("urn:t2",)])]],
                }
            ],
        }
    ]
    responses = {"q1": {"actual_answer": "", "actual_steps": [_actual(select(["t"], [("urn:t1",)]), "s1")]}}
    (result,) = run_evaluation(corpus, responses, steps_scope=scope)
    assert result["steps_score"] == 0.0
    assert (result["steps_result_precision"], result["steps_result_recall"]) == (1.0, 0.5)
    assert math.isclose(result["steps_result_f1"], 2 / 3)
    assert "steps_output_error" not in result


def test_the_worked_example_of_the_steps_page() -> None:
    """docs/steps.md: the agent that returned only OSLO T1 scores precision 1, recall 0.5, F1 0.667."""
    reference = (["transformer", "transformerName"], [("urn:t2", "OSLO T2"), ("urn:t1", "OSLO T1")])
    agent = (["name", "kind", "t"], [("OSLO T1", "PowerTransformer", "urn:t1")])
    found = overlap(reference, agent)
    assert (found.precision, found.recall) == (1.0, 0.5)
    assert round(found.f1, 3) == 0.667


def test_malformed_actual_steps_count_as_no_answer() -> None:
    credit = result_credit([[step(["a"], [("1",)])]], ["not a step", None, {"name": "sparql_query"}])  # type: ignore[list-item]
    assert credit is not None and credit.f1 == 0.0


def test_best_mapping_among_columns_sharing_one_value_domain() -> None:
    """Columns over the same labels are told apart only by whole rows; a tenth of rows changed: 0.9."""
    rng = random.Random(5)
    labels = [f"label-{index}" for index in range(5)]
    rows = [
        (
            f"urn:id-{index}",
            *(rng.choice(labels) for _ in range(4)),
            str(rng.randrange(10)),
            str(rng.randrange(10)),
        )
        for index in range(300)
    ]
    variables = [f"v{index}" for index in range(7)]
    extra = [(*row, rng.choice(labels), rng.choice(labels), str(rng.randrange(10))) for row in rows]
    changed = [(row[0] + "-x", *row[1:]) if index % 10 == 0 else row for index, row in enumerate(extra)]
    order = list(range(10))
    rng.shuffle(order)
    actual = ([f"a{index}" for index in order], [tuple(row[index] for index in order) for row in changed])
    found = overlap((variables, rows), actual)
    assert math.isclose(found.precision, 0.9) and math.isclose(found.recall, 0.9)


terms = st.sampled_from(["a", "b", "c", 1, Decimal("1.5"), None])


@given(
    st.lists(terms, max_size=8),
    st.integers(0, 8).flatmap(
        lambda rows: st.lists(st.lists(terms, min_size=rows, max_size=rows), max_size=4)
    ),
    st.sampled_from(list(RowMode)),
)
def test_property_one_column_shortcut_is_the_general_search(
    reference: list[Any], actual: list[list[Any]], mode: RowMode
) -> None:
    """The one-required-column shortcut gives the general search's overlap, ties included."""
    expected = _BestMapping([tuple(reference)], [tuple(column) for column in actual], mode).overlap()
    assert one_column_overlap(tuple(reference), [tuple(column) for column in actual], mode) == expected
