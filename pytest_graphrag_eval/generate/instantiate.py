"""One candidate binding made into a question: its steps executed, its answer read from their result.

Outputs are fetched by the plugin's own endpoint code, so a generated corpus is fresh by construction.
A binding that cannot make a question is dropped with its reason; a query the graph refuses is an
error naming template, question and field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.generate.ids import question_id, stable_index
from pytest_graphrag_eval.generate.placeholders import (
    PLACEHOLDER,
    BlankNodeValue,
    Term,
    fill_query,
    fill_text,
)
from pytest_graphrag_eval.generate.templates import QuestionTemplate, StepTemplate
from pytest_graphrag_eval.graph.endpoint import (
    SPARQL_RESULTS_JSON,
    EndpointError,
    EndpointUnavailable,
    QueryResult,
    SparqlEndpoint,
)

Row = dict[str, Term]


@dataclass(frozen=True)
class Instance:
    """A question generated from one binding, ready to be written into the corpus."""

    question_id: str
    question_text: str
    reference_answer: str
    reference_steps: list[list[dict[str, Any]]]
    bindings: dict[str, str]

    @property
    def reference_outputs(self) -> tuple[str, ...]:
        """Every reference step's output: two questions with the same are duplicates of each other."""
        outputs = (step.get("output") for group in self.reference_steps for step in group)
        return tuple(text if isinstance(text, str) else json.dumps(text, sort_keys=True) for text in outputs)


@dataclass(frozen=True)
class Dropped:
    """A binding that made no question, and why (counted and shown, never silent)."""

    question_id: str
    reason: str


@dataclass(frozen=True)
class Binding:
    """One candidate row: the terms of its columns, and the id its question would have."""

    values: Row
    question_id: str


def bind(template: QuestionTemplate, row: Row) -> Binding:
    """The candidate row with the id its question takes."""
    return Binding(row, question_id(template.template_id, template.question_id, template.parameters, row))


def unbound(binding: Binding, needed: Collection[str]) -> Dropped | None:
    """Why a candidate row leaving a `needed` name unbound (an OPTIONAL column) makes no question."""
    missing = sorted(name for name in needed if name not in binding.values)
    if not missing:
        return None
    return Dropped(binding.question_id, f"no value for {', '.join(missing)} in its candidate row")


def instantiate(
    template: QuestionTemplate, header: str, endpoint: SparqlEndpoint, binding: Binding
) -> Instance | Dropped:
    """The question of `binding` (every name it needs bound: see `unbound`), or why there is none."""
    values, ident = binding.values, binding.question_id
    phrasing = template.phrasings[stable_index(ident, len(template.phrasings))]
    groups: list[list[dict[str, Any]]] = []
    answer_rows: list[Row] = []
    try:
        for group_index, group in enumerate(template.steps):
            steps = []
            for index, step in enumerate(group):
                made, columns, rows = _step(template, header, endpoint, step, values, ident)
                if (group_index, index) == (template.answer.group, template.answer.index):
                    _check_answer_column(template, columns)
                    answer_rows = rows
                steps.append(made)
            groups.append(steps)
    except BlankNodeValue as error:
        return Dropped(ident, str(error))
    keep = template.keep
    if len(answer_rows) < keep.min_rows or (keep.max_rows is not None and len(answer_rows) > keep.max_rows):
        bounds = f"{keep.min_rows}..{'' if keep.max_rows is None else keep.max_rows}"
        return Dropped(ident, f"its answer query gave {len(answer_rows)} rows (kept: {bounds})")
    answer = _answer(template, answer_rows, values)
    if answer is None:
        return Dropped(ident, "its answer query gave no value to read the answer from")
    parameters = {name: str(values[name]["value"]) for name in template.parameters}
    return Instance(ident, fill_text(phrasing, values), answer, groups, parameters)


def used_names(template: QuestionTemplate) -> set[str]:
    """Every placeholder name of the template's id pattern, phrasings and steps."""
    texts = [*template.phrasings, template.question_id or ""]
    for group in template.steps:
        for step in group:
            texts.append(json.dumps(step.raw, ensure_ascii=False))
            if step.documents is not None:
                texts.append(step.documents.query)
    return {name for text in texts for name in PLACEHOLDER.findall(text)}


def rows_of(output: str) -> tuple[list[str], list[Row]]:
    """The variables and rows of a SPARQL results JSON text (none for ASK); every term part is text
    (pyoxigraph's writer), so no number is read."""
    document: JSONValue = json_text.loads_shape(output)
    if not isinstance(document, dict):
        return [], []
    head, results = document.get("head"), document.get("results")
    names = head.get("vars") if isinstance(head, dict) else None
    bindings = results.get("bindings") if isinstance(results, dict) else None
    columns = [str(name) for name in names] if isinstance(names, list) else []
    rows = [row for row in bindings if isinstance(row, dict)] if isinstance(bindings, list) else []
    return columns, rows  # type: ignore[return-value]  # a row's values are terms (JSON objects)


def execute(
    endpoint: SparqlEndpoint, query: str, template: QuestionTemplate, field: str, ident: str | None
) -> QueryResult:
    """Run one query; an engine error is a TemplateError naming the template, question and field."""
    try:
        return endpoint.execute(query)
    except EndpointUnavailable as error:
        raise template.error(f"the SPARQL endpoint cannot be reached: {error}", field) from None
    except EndpointError as error:
        where = f" (question {ident!r})" if ident else ""
        raise template.error(f"the query failed{where}: {error}", field) from None


def _step(
    template: QuestionTemplate,
    header: str,
    endpoint: SparqlEndpoint,
    step: StepTemplate,
    values: Mapping[str, Term],
    ident: str,
) -> tuple[dict[str, Any], list[str], list[Row]]:
    """The step filled and executed, with the columns and rows of its result (none unless SPARQL JSON)."""
    raw = step.raw
    made: dict[str, Any] = {"name": raw["name"]}
    columns: list[str] = []
    rows: list[Row] = []
    query = header + fill_query(step.query, values) if step.query is not None else None
    if "args" in raw:
        made["args"] = {
            key: query if key == "query" and query is not None else _filled(item, values)
            for key, item in raw["args"].items()
        }
    if query is not None:
        result = execute(endpoint, query, template, f"{step.where}.args.query", ident)
        made["output"] = result.text
        made["output_media_type"] = result.media_type
        if result.media_type == SPARQL_RESULTS_JSON:
            columns, rows = rows_of(result.text)
    elif step.documents is not None:
        spec = step.documents
        query = header + fill_query(spec.query, values)
        result = execute(endpoint, query, template, f"{step.where}.documents.query", ident)
        documents = [
            {
                "id": str(row[spec.id_column]["value"]),
                "text": str(row.get(spec.text_column, {}).get("value", "")),
            }
            for row in rows_of(result.text)[1]
            if spec.id_column in row
        ]
        made["output"] = json.dumps(documents, ensure_ascii=False)
    for key, item in raw.items():
        if key not in made:
            made[key] = _filled(item, values)
    return made, columns, rows


def _check_answer_column(template: QuestionTemplate, columns: list[str]) -> None:
    if template.answer.kind == "labels" and template.answer.column not in columns:
        raise template.error(
            f"{template.answer.column!r} is not a column of the answer step's result "
            f"(columns: {', '.join(columns) or 'none'})",
            "answer.labels",
        )


def _filled(value: Any, values: Mapping[str, Term]) -> Any:
    if isinstance(value, str):
        return fill_text(value, values)
    if isinstance(value, list):
        return [_filled(item, values) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, values) for key, item in value.items()}
    return value


def _answer(template: QuestionTemplate, rows: list[Row], values: Mapping[str, Term]) -> str | None:
    rule = template.answer
    if rule.kind == "count":
        return str(len(rows))
    if rule.kind == "labels":
        column = rule.column
        return rule.separator.join([str(row[column]["value"]) for row in rows if column in row]) or None
    if len(rows) != 1:
        return None
    known = {**values, **rows[0]}
    if any(name not in known for name in PLACEHOLDER.findall(rule.pattern)):
        return None
    return fill_text(rule.pattern, known)
