"""Property tests: how transformations of SPARQL results change the match score."""

from __future__ import annotations

import contextlib
import itertools
import json
import random
from collections import Counter
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.formats.sparql_results import SparqlResultsError, SparqlTable, parse_sparql_results
from pytest_graphrag_eval.steps.match import sparql_output_score
from pytest_graphrag_eval.steps.sparql_compare import results_match
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch

XSD = "http://www.w3.org/2001/XMLSchema#"

# A small value domain so that columns often share values and signatures collide.
values = st.one_of(
    st.sampled_from(["a", "b", "ab", "urn:x"]),
    st.integers(min_value=0, max_value=3),
    st.sampled_from([0.5, 1.25]),
    st.booleans(),
    st.none(),
)


def cell(value: Any) -> dict[str, str]:
    if isinstance(value, bool):
        return {"type": "literal", "value": str(value).lower(), "datatype": XSD + "boolean"}
    if isinstance(value, int):
        return {"type": "literal", "value": str(value), "datatype": XSD + "integer"}
    if isinstance(value, float):
        return {"type": "literal", "value": repr(value), "datatype": XSD + "decimal"}
    return {"type": "uri" if value.startswith("urn:") else "literal", "value": value}


def select(variables: list[str], rows: list[tuple[Any, ...]]) -> str:
    bindings = [
        {name: cell(value) for name, value in zip(variables, row, strict=True) if value is not None}
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


@st.composite
def tables(draw: st.DrawFn, min_columns: int = 1, max_columns: int = 4, min_rows: int = 0) -> tuple:
    """(variables, rows) of a SELECT result."""
    width = draw(st.integers(min_value=min_columns, max_value=max_columns))
    rows = draw(st.lists(st.tuples(*[values] * width), min_size=min_rows, max_size=6))
    return [f"v{index}" for index in range(width)], rows


def step(variables: list[str], rows: list[tuple], required: list[str] | None = None, **flags: Any) -> dict:
    return {
        "name": "sparql_query",
        "output": select(variables, rows),
        "output_media_type": "application/sparql-results+json",
        "required_columns": required if required is not None else variables,
        **flags,
    }


def score(reference: dict[str, Any], variables: list[str], rows: list[tuple]) -> float:
    return sparql_output_score(reference, select(variables, rows))


modes = st.sampled_from([{}, {"ignore_duplicates": False}, {"ordered": True}])


def brute_force_match(reference: SparqlTable, actual: SparqlTable, required: list[str], flags: dict) -> bool:
    """The specification, checked over every one-to-one column mapping."""
    if len(required) > len(actual.variables):
        return False
    if reference.row_count == 0 or actual.row_count == 0:
        return reference.row_count == actual.row_count
    indices = [reference.variables.index(name) for name in required]
    expected = [tuple(row[index] for index in indices) for row in reference.rows]
    for mapping in itertools.permutations(range(len(actual.variables)), len(required)):
        projected = [tuple(row[index] for index in mapping) for row in actual.rows]
        if flags.get("ordered"):
            agrees = projected == expected
        elif flags.get("ignore_duplicates") is False:
            agrees = Counter(projected) == Counter(expected)
        else:
            agrees = set(projected) == set(expected)
        if agrees:
            return True
    return False


def check_against_specification(reference: tuple, actual: tuple, required: list[str], flags: dict) -> None:
    """results_match and explain_sparql_mismatch both agree with the brute-force specification."""
    reference_table = parse_sparql_results(select(*reference))
    actual_table = parse_sparql_results(select(*actual))
    expected = brute_force_match(reference_table, actual_table, required, flags)
    assert results_match(reference_table, actual_table, required, **flags) is expected
    explanation = explain_sparql_mismatch(step(*reference, required, **flags), select(*actual))
    assert explanation["matched"] is expected
    if not expected and reference_table.row_count and actual_table.row_count:
        differences = explanation["missing_rows_total"] + explanation["extra_rows_total"]
        assert differences or explanation["unmapped_columns"] or "first_differing_row" in explanation


@settings(max_examples=300)
@given(tables(), tables(), modes, st.data())
def test_search_agrees_with_brute_force(
    reference: tuple, actual: tuple, flags: dict, data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(reference[0]), min_size=1, unique=True))
    check_against_specification(reference, actual, required, flags)


@settings(max_examples=300)
@given(tables(min_rows=1), modes, st.data())
def test_search_agrees_with_brute_force_on_near_matches(
    reference: tuple, flags: dict, data: st.DataObject
) -> None:
    """Actual results derived from the reference: columns permuted and added, rows dropped or changed."""
    reference_vars, reference_rows = reference
    width = len(reference_vars) + data.draw(st.integers(0, 2))
    order = data.draw(st.permutations(range(width)))
    rows = [(*row, *(data.draw(values) for _ in range(width - len(row)))) for row in reference_rows]
    rows = [tuple(row[index] for index in order) for row in rows]
    if data.draw(st.booleans()):
        position = data.draw(st.integers(0, len(rows) - 1))
        changed = list(rows[position])
        changed[data.draw(st.integers(0, width - 1))] = data.draw(values)
        rows[position] = tuple(changed)
    rows = data.draw(st.permutations(rows)) if data.draw(st.booleans()) else rows
    rows = rows[: data.draw(st.integers(0, len(rows)))] + rows[:1] * data.draw(st.integers(0, 1))
    required = data.draw(st.lists(st.sampled_from(reference_vars), min_size=1, unique=True))
    check_against_specification(reference, ([f"a{index}" for index in range(width)], rows), required, flags)


@settings(max_examples=200)
@given(tables(min_rows=1), tables(), modes, st.randoms(use_true_random=False))
def test_permuting_actual_columns_never_changes_the_score(
    reference: tuple, actual: tuple, flags: dict, rng: random.Random
) -> None:
    reference_step = step(*reference, **flags)
    variables, rows = actual
    order = list(range(len(variables)))
    rng.shuffle(order)
    permuted_rows = [tuple(row[index] for index in order) for row in rows]
    permuted_vars = [variables[index] for index in order]
    assert score(reference_step, permuted_vars, permuted_rows) == score(reference_step, variables, rows)


@settings(max_examples=200)
@given(tables(min_rows=1), modes, st.lists(values, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_permuting_and_adding_columns_keeps_a_match(
    reference: tuple, flags: dict, extra: list[Any], rng: random.Random
) -> None:
    variables, rows = reference
    reference_step = step(variables, rows, **flags)
    widened = [(*row, *(rng.choice([*extra, None]) for _ in extra)) for row in rows]
    widened_vars = [*variables, *(f"extra{index}" for index in range(len(extra)))]
    order = list(range(len(widened_vars)))
    rng.shuffle(order)
    actual_rows = [tuple(row[index] for index in order) for row in widened]
    actual_vars = [widened_vars[index] for index in order]
    assert score(reference_step, actual_vars, actual_rows) == 1.0


@settings(max_examples=200)
@given(tables(), tables(), modes)
def test_adding_actual_columns_never_lowers_the_score(reference: tuple, actual: tuple, flags: dict) -> None:
    reference_step = step(*reference, **flags)
    variables, rows = actual
    widened_rows = [(*row, "a") for row in rows]
    assert score(reference_step, [*variables, "added"], widened_rows) >= score(
        reference_step, variables, rows
    )


@settings(max_examples=200)
@given(tables(), tables(), modes)
def test_renaming_variables_never_changes_the_score(reference: tuple, actual: tuple, flags: dict) -> None:
    reference_vars, reference_rows = reference
    actual_vars, actual_rows = actual
    before = score(step(reference_vars, reference_rows, **flags), actual_vars, actual_rows)
    renamed_reference = [f"renamed_{name}" for name in reference_vars]
    renamed_actual = [f"other_{index}" for index, _ in enumerate(actual_vars)]
    after = score(step(renamed_reference, reference_rows, **flags), renamed_actual, actual_rows)
    assert after == before


@settings(max_examples=200)
@given(tables(min_rows=1), st.randoms(use_true_random=False))
def test_shuffling_rows_keeps_an_unordered_match(reference: tuple, rng: random.Random) -> None:
    variables, rows = reference
    shuffled = rows[:]
    rng.shuffle(shuffled)
    assert score(step(variables, rows), variables, shuffled) == 1.0
    assert score(step(variables, rows, ignore_duplicates=False), variables, shuffled) == 1.0


@settings(max_examples=200)
@given(tables(min_rows=2), st.randoms(use_true_random=False))
def test_shuffling_rows_breaks_an_ordered_match_unless_order_is_unchanged(
    reference: tuple, rng: random.Random
) -> None:
    # A unique label per row pins the column mapping, so only the row order decides.
    variables, rows = reference
    labelled = [(f"row-{index}", *row) for index, row in enumerate(rows)]
    shuffled = labelled[:]
    rng.shuffle(shuffled)
    expected = 1.0 if shuffled == labelled else 0.0
    labelled_vars = ["label", *variables]
    assert score(step(labelled_vars, labelled, ordered=True), labelled_vars, shuffled) == expected


@settings(max_examples=200)
@given(st.lists(values, min_size=2, max_size=6), st.randoms(use_true_random=False))
def test_ordered_single_column_matches_only_the_same_sequence(column: list[Any], rng: random.Random) -> None:
    shuffled = column[:]
    rng.shuffle(shuffled)
    same = (
        parse_sparql_results(select(["v"], [(v,) for v in column])).rows
        == parse_sparql_results(select(["v"], [(v,) for v in shuffled])).rows
    )
    reference_step = step(["v"], [(value,) for value in column], ordered=True)
    assert score(reference_step, ["w"], [(value,) for value in shuffled]) == (1.0 if same else 0.0)


@settings(max_examples=200)
@given(tables(min_rows=1), st.data())
def test_duplicating_rows(reference: tuple, data: st.DataObject) -> None:
    variables, rows = reference
    duplicated = data.draw(st.sampled_from(rows))
    actual_rows = [*rows, duplicated]
    assert score(step(variables, rows), variables, actual_rows) == 1.0
    assert score(step(variables, rows, ignore_duplicates=False), variables, actual_rows) == 0.0


@given(st.text(alphabet="ab", min_size=3, max_size=8), st.data())
def test_split_text_never_equals_differently_split_text(joined: str, data: st.DataObject) -> None:
    first_cut, second_cut = data.draw(
        st.lists(st.integers(1, len(joined) - 1), min_size=2, max_size=2, unique=True)
    )
    reference_row = (joined[:first_cut], joined[first_cut:])
    actual_row = (joined[:second_cut], joined[second_cut:])
    assume(actual_row[::-1] != reference_row)  # swapping the two columns would be a real match
    assert score(step(["a", "b"], [reference_row]), ["a", "b"], [actual_row]) == 0.0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)
cells = st.dictionaries(
    st.sampled_from(["type", "value", "datatype", "xml:lang"]),
    json_values
    | st.sampled_from(["uri", "literal", XSD + "integer", XSD + "double", XSD + "boolean", "1.5"]),
)
well_formed_skeleton = st.fixed_dictionaries(
    {
        "head": st.fixed_dictionaries({"vars": st.lists(st.sampled_from(["a", "b"]), unique=True)}),
        "results": st.fixed_dictionaries(
            {"bindings": st.lists(st.dictionaries(st.sampled_from(["a", "b"]), cells), max_size=3)}
        ),
    }
)
anything_results_like = st.fixed_dictionaries(
    {"head": json_values, "results": json_values}, optional={"boolean": json_values}
)


@settings(max_examples=300)
@given(st.one_of(well_formed_skeleton, anything_results_like, json_values))
def test_untrusted_output_parses_or_raises_only_our_error(data: Any) -> None:
    text = json.dumps(data)
    with contextlib.suppress(SparqlResultsError):
        parse_sparql_results(text)
    assert sparql_output_score(step(["a"], [("x",)]), text) in (0.0, 1.0)
