"""What a reference step expects, and what can be wrong with it: validation and the matchers read
expectations through the same helpers, so they cannot disagree."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NamedTuple

from pytest_graphrag_eval.formats.rdf_graphs import (
    RDF_MEDIA_TYPES,
    RdfGraph,
    RdfGraphError,
    RdfSupportMissing,
    parse_rdf_graph,
)
from pytest_graphrag_eval.formats.sparql_results import (
    MemoizedParser,
    ResultsParser,
    SparqlResultsError,
    SparqlTable,
    parse_sparql_results,
)
from pytest_graphrag_eval.formats.terms import DEFAULT_LITERAL_MATCH, LITERAL_MATCHES, LiteralMatch

SPARQL_RESULTS_MEDIA_TYPE = "application/sparql-results+json"
JSON_MEDIA_TYPE = "application/json"
# Only the two media types above and the RDF syntaxes of graph outputs (formats/rdf_graphs.py) have
# rules of their own; any other (text/uri, text/plain, ...) compares the outputs as values.
RETRIEVAL_STEP = "retrieval"
IRI_DISCOVERY_STEP = "iri_discovery"
TIME_SERIES_STEP = "retrieve_time_series"
DATA_POINTS_STEP = "retrieve_data_points"
_OWN_RULE_STEPS = (IRI_DISCOVERY_STEP, TIME_SERIES_STEP, DATA_POINTS_STEP)
"""Steps whose name decides their rule before their media type does (`steps.match` rules 1 and 3)."""


class SparqlExpectation(NamedTuple):
    """A reference SPARQL step; `table` is parsed under `literal_match`, as an actual output must be."""

    table: SparqlTable
    required_columns: tuple[str, ...]
    ordered: bool
    ignore_duplicates: bool
    literal_match: LiteralMatch


def step_path(group: int, index: int | None = None) -> str:
    """A reference step's 0-based path in the corpus field (`reference_steps[1][0]`), the one name
    every message and report uses."""
    return f"reference_steps[{group}]" + (f"[{index}]" if index is not None else "")


def reference_step_problem(
    step: Mapping[str, object], parse: ResultsParser = parse_sparql_results
) -> str | None:
    """Describe what is wrong with one reference step's content (naming the field), or None."""
    try:
        _check_step(step, parse)
    except ValueError as error:
        return str(error)
    return None


def media_type(step: Mapping[str, object]) -> object:
    """The step's `output_media_type` as written (compared with the known media types; checked by
    `reference_step_problem`)."""
    return step.get("output_media_type")


def sparql_expectation(
    step: Mapping[str, object], parse: ResultsParser = parse_sparql_results
) -> SparqlExpectation:
    """Read a SPARQL reference step (once per `MemoizedParser`); raises ValueError naming the bad field.

    `required_columns` defaults to every reference variable; an empty list asks only that both have rows
    or both have none."""
    if isinstance(parse, MemoizedParser):
        known = parse.readings.get(id(step))
        if known is None or known[0] is not step:  # a reading handed over (copied?) may hold another id
            known = parse.readings[id(step)] = (step, _read_sparql_step(step, parse))
        expectation: SparqlExpectation = known[1]
        return expectation
    return _read_sparql_step(step, parse)


def _read_sparql_step(step: Mapping[str, object], parse: ResultsParser) -> SparqlExpectation:
    # The flags first, in `_check_step`'s order: it leaves them to this function for SPARQL steps.
    ordered = _flag(step, "ordered", default=False)
    ignore_duplicates = _flag(step, "ignore_duplicates", default=True)
    literal_match = _literal_match(step)
    output = step.get("output")
    if output is None:
        raise ValueError("'output' is missing (the reference SPARQL results JSON)")
    try:
        table = parse(output, literal_match)
    except SparqlResultsError as error:
        raise ValueError(f"'output' is not SPARQL results JSON: {error}") from None
    required = _required_columns(step, table)
    return SparqlExpectation(
        table=table,
        required_columns=required,
        ordered=ordered,
        ignore_duplicates=ignore_duplicates,
        literal_match=literal_match,
    )


def graph_expectation(step: Mapping[str, object]) -> RdfGraph:
    """The graph a CONSTRUCT/DESCRIBE reference step expects; raises ValueError naming the field."""
    media = str(step["output_media_type"])  # one of RDF_MEDIA_TYPES: the caller checked
    output = step.get("output")
    if output is None:
        raise ValueError(f"'output' is missing (the expected {RDF_MEDIA_TYPES[media]} graph)")
    try:
        return parse_rdf_graph(output, media)
    except RdfSupportMissing as error:
        raise ValueError(f"'output_media_type' {media}: {error}") from None
    except RdfGraphError as error:
        raise ValueError(f"'output' is {str(error)[:1].lower()}{str(error)[1:]}") from None


def relevant_ids(step: Mapping[str, object]) -> list[str]:
    """Ids of the relevant documents listed in a reference retrieval step's output."""
    # Imported here: the retrieval package imports the corpus module, which imports this one.
    from pytest_graphrag_eval.formats.documents import parse_relevance

    if step.get("output") is None:
        raise ValueError("'output' is missing (the list of relevant documents)")
    try:
        judgements = parse_relevance(step["output"])
    except ValueError as error:
        raise ValueError(f"'output' is not a document list: {error}") from None
    ids = [doc_id for doc_id, relevance in judgements.items() if relevance > 0]
    if not ids:
        raise ValueError("'output' lists no relevant document, so recall is undefined")
    return ids


def cutoff(step: Mapping[str, object]) -> int | None:
    """`args.k` of a step when it is a positive integer, else None; raises ValueError when invalid."""
    args = step.get("args")
    k = args.get("k") if isinstance(args, Mapping) else None
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"'args.k' must be a positive integer, got {k!r}")
    return k


def reference_iri(step: Mapping[str, object]) -> str:
    """The IRI an `iri_discovery` step expects: its `output`, or `args.iri` when there is no output."""
    value = step.get("output")
    field = "output"
    if value is None:
        args = step.get("args")
        value = args.get("iri") if isinstance(args, Mapping) else None
        field = "args.iri"
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'{field}' must be the expected IRI (text)")
    iri = value.strip()
    if iri.startswith("<") and iri.endswith(">"):
        iri = iri[1:-1].strip()
    return iri


def time_series_args_problem(step: Mapping[str, object]) -> str | None:
    """What makes a reference time-series step unusable, naming the field, or None."""
    args = step.get("args")
    if not isinstance(args, Mapping):
        return "'args' must be a mapping of the expected tool arguments"
    if step.get("name") == "retrieve_data_points" and "external_id" not in args:
        return "'args.external_id' is missing (the time series the data points come from)"
    return None


def _check_step(step: Mapping[str, object], parse: ResultsParser) -> None:
    media = media_type(step)
    if media is not None and not isinstance(media, str):
        raise ValueError(f"'output_media_type' must be a media type (text), got {media!r}")
    name = step.get("name")
    # The rules are tried in the order step_match_score applies them.
    if media == SPARQL_RESULTS_MEDIA_TYPE and name not in _OWN_RULE_STEPS:
        sparql_expectation(step, parse)  # checks the flags below first, then the output
        return
    _flag(step, "ordered", default=False)
    _flag(step, "ignore_duplicates", default=True)
    _literal_match(step)
    if name == IRI_DISCOVERY_STEP:
        reference_iri(step)
    elif name in (TIME_SERIES_STEP, DATA_POINTS_STEP):
        problem = time_series_args_problem(step)
        if problem:
            raise ValueError(problem)
    elif media in RDF_MEDIA_TYPES:
        graph_expectation(step)
    elif media == JSON_MEDIA_TYPE:
        _check_json_output(step)
    elif name == RETRIEVAL_STEP:
        relevant_ids(step)
        cutoff(step)
    # Any other step compares its `output` as a value (text or JSON); a missing output expects none.


def _check_json_output(step: Mapping[str, object]) -> None:
    if "output" not in step:
        raise ValueError("'output' is missing (the expected JSON)")
    if isinstance(step["output"], str):
        try:
            json.loads(step["output"])
        except (ValueError, RecursionError) as error:
            raise ValueError(f"'output' is not valid JSON: {str(error)[:120]}") from None


def _flag(step: Mapping[str, object], key: str, *, default: bool) -> bool:
    value = step.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false, got {value!r}")
    return value


def _literal_match(step: Mapping[str, object]) -> LiteralMatch:
    """`literal_match`: `value` (default: a plain `8` equals a typed 8) or `strict` (text stays text)."""
    value = step.get("literal_match", DEFAULT_LITERAL_MATCH)
    for known in LITERAL_MATCHES:
        if value == known:
            return known
    raise ValueError(f"'literal_match' must be one of {', '.join(LITERAL_MATCHES)}, got {value!r}")


def _required_columns(step: Mapping[str, object], table: SparqlTable) -> tuple[str, ...]:
    if "required_columns" not in step:
        return table.variables
    columns = step["required_columns"]
    if table.is_ask:
        return ()  # an ASK result has no columns: whatever is listed is not used
    if not isinstance(columns, list) or not all(isinstance(name, str) for name in columns):
        raise ValueError("'required_columns' must be a list of variable names")
    named = set(columns)
    if len(named) != len(columns):
        duplicated = sorted({name for name in columns if columns.count(name) > 1})
        raise ValueError(f"'required_columns' names {', '.join(map(repr, duplicated))} more than once")
    if not named.issubset(table.variables):
        absent = [name for name in columns if name not in table.variables]
        listed = ", ".join(table.variables) or "none"
        raise ValueError(
            f"'required_columns' names {', '.join(map(repr, absent))}, which the reference result "
            f"does not have (its variables: {listed})"
        )
    return tuple(columns)
