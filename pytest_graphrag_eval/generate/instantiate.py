"""One candidate binding made into a question: its steps executed, its answer read from their result.

A template is compiled once into all its questions share: their shape (`Slot`s where their own texts
go) and its YAML `Skeleton`, each text as a `str.format_map` pattern, the queries to run, the answer's
reader and which texts make the duplicate check's key. Making a question then does only what differs:
fill and run its queries, read the answer, fill its texts. A binding that cannot make a question is
dropped with its reason; a query the graph refuses is an error naming template, question and field."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from pytest_graphrag_eval.generate.answer_reader import AnswerReader, Row, rows_of
from pytest_graphrag_eval.generate.corpus_text import Skeleton, Slot, yaml_items
from pytest_graphrag_eval.generate.ids import question_id, stable_index
from pytest_graphrag_eval.generate.placeholders import PLACEHOLDER, BlankNodeValue, Pieces
from pytest_graphrag_eval.generate.templates import (
    DocumentsSpec,
    QuestionTemplate,
    StepTemplate,
    TemplateError,
)
from pytest_graphrag_eval.graph.endpoint import (
    SPARQL_RESULTS_JSON,
    EndpointError,
    EndpointUnavailable,
    QueryResult,
)

Run = Callable[[str], QueryResult]
Ran = list[tuple[str, QueryResult | EndpointError] | BlankNodeValue]
"""A question's queries in step order, each filled with its result or the error that ended the run; or
why the next one could not be filled."""
QUESTION_INDENT = "  "  # a question is an item of its template's `questions`
_OWN_TEXTS = 3  # id, question text, reference answer: the first slots of every question
_QUERY, _OUTPUT, _MEDIA_TYPE = 0, 1, 2  # a slot a query step's run fills: which of its texts


@dataclass(frozen=True)
class CompiledStep:
    """A reference step split once: the query it runs (prefixes included) and what fills its slots, in
    order: a pattern of the binding's plain values, or which text of the step's run (`_QUERY`...)."""

    step: StepTemplate
    query: Pieces | None
    where: str
    fills: tuple[str | int, ...]
    answers: bool


@dataclass(frozen=True)
class CompiledTemplate:
    """A template as its questions are made (see the module's docstring)."""

    template: QuestionTemplate
    id_pattern: Pieces | None
    phrasings: tuple[str, ...]
    steps: tuple[CompiledStep, ...]
    shape: dict[str, Any]
    skeleton: Skeleton
    reader: AnswerReader
    needed: frozenset[str]
    output_key: Callable[[tuple[str, ...]], object]
    """The texts of a question's outputs: two questions of the template with the same are duplicates."""

    def bind(self, row: Row) -> Binding:
        """The candidate row with the id its question takes; a name the row leaves unbound reads as empty
        in it, the id under which the row is dropped with its reason (`unbound`)."""
        plain = {name: str(term.get("value", "")) for name, term in row.items()}
        complete = self.needed <= plain.keys()
        template, pattern = self.template, self.id_pattern
        shown = plain if complete or pattern is None else {**dict.fromkeys(pattern.names, ""), **plain}
        ident = question_id(template.template_id, pattern, template.parameters, shown)
        return Binding(row, ident, plain, complete)

    def id_source(self, binding: Binding) -> str:
        """The text its question id is the slug (or hash) of: two bindings share an id by its values."""
        pattern = self.id_pattern
        return binding.question_id if pattern is None else pattern.form.format_map(binding.plain)


class Instance(NamedTuple):
    """A question generated from one binding: its own texts, in the order its template's shape holds them."""

    compiled: CompiledTemplate
    texts: tuple[str, ...]

    @property
    def question_id(self) -> str:
        return self.texts[0]

    @property
    def question_text(self) -> str:
        return self.texts[1]

    @property
    def reference_answer(self) -> str:
        return self.texts[2]

    @property
    def reference_steps(self) -> list[list[dict[str, Any]]]:
        return cast(list[list[dict[str, Any]]], _filled(self.compiled.shape["reference_steps"], self.texts))

    @property
    def bindings(self) -> dict[str, str]:
        parameters = self.compiled.template.parameters
        return dict(zip(parameters, self.texts[len(self.texts) - len(parameters) :], strict=True))

    def yaml(self) -> list[str]:
        """The question's YAML as an item of its template's `questions` list, in parts; with its own
        thresholds, written as plain data with them after its reference steps."""
        thresholds = self.compiled.template.question_thresholds
        if self.texts[0] not in thresholds:
            return self.compiled.skeleton.fill(self.texts)
        data: dict[str, Any] = _filled(self.compiled.shape, self.texts)
        head = dict(list(data.items())[:4])  # id, question_text, reference_answer, reference_steps
        return [yaml_items([{**head, "thresholds": thresholds[self.texts[0]], **data}], QUESTION_INDENT)]


@dataclass(frozen=True)
class Dropped:
    """A binding that made no question, and why (counted and shown, never silent)."""

    question_id: str
    reason: str


class Binding(NamedTuple):
    """One candidate row: the terms of its columns, the id its question would have, their plain values,
    and whether it binds every name its template uses."""

    values: Row
    question_id: str
    plain: dict[str, str]
    complete: bool


def unbound(binding: Binding, needed: frozenset[str]) -> Dropped:
    """Why a candidate row leaving a `needed` name unbound (an OPTIONAL column) makes no question."""
    missing = sorted(needed - binding.values.keys())
    return Dropped(binding.question_id, f"no value for {', '.join(missing)} in its candidate row")


def compile_template(template: QuestionTemplate, header: str, graph: str) -> CompiledTemplate:
    """`template` split once into what each of its questions fills; `graph` is their provenance's."""
    slots: list[str | int] = []
    steps, step_shapes = [], []
    for group_index, group in enumerate(template.steps):
        shapes = []
        for index, step in enumerate(group):
            first = len(slots)
            shapes.append(_step_shape(step, slots))
            query = step.query if step.query is not None else step.documents and step.documents.query
            steps.append(
                CompiledStep(
                    step,
                    Pieces.of(header + query) if query else None,
                    f"{step.where}.{'args' if step.documents is None else 'documents'}.query",
                    tuple(slots[first:]),
                    (group_index, index) == (template.answer.group, template.answer.index),
                )
            )
        step_shapes.append(shapes)
    shape: dict[str, Any] = {
        "id": Slot(0),
        "question_text": Slot(1),
        "reference_answer": Slot(2),
        "reference_steps": step_shapes,
    }
    if template.xfail:
        shape["xfail"] = template.xfail
    first_binding = _OWN_TEXTS + len(slots)
    shape["provenance"] = {
        "template": template.template_id,
        "bindings": {name: Slot(first_binding + i) for i, name in enumerate(template.parameters)},
        "graph": graph,
    }
    outputs = [
        index for group in step_shapes for step in group for index in _slot_indices(step.get("output"))
    ]
    return CompiledTemplate(
        template,
        None if template.question_id is None else Pieces.of(template.question_id),
        tuple(Pieces.of(phrasing).form for phrasing in template.phrasings),
        tuple(steps),
        shape,
        Skeleton.of(shape, QUESTION_INDENT),
        AnswerReader(template.answer),
        frozenset(used_names(template)),
        operator.itemgetter(*outputs) if outputs else lambda texts: (),
    )


def instantiate(compiled: CompiledTemplate, binding: Binding, ran: Ran) -> Instance | Dropped:
    """The question of `binding` (every name it needs bound: see `unbound`) from its queries' results,
    or why there is none; a query's error is raised as its question and step's."""
    template = compiled.template
    plain, ident = binding.plain, binding.question_id
    texts = [ident, "", ""]  # the question's text and answer are put in last
    rows, answer, run = 0, None, 0
    for step in compiled.steps:
        made = ("", "", "")
        if step.query is not None:
            held = ran[run]
            run += 1
            if isinstance(held, BlankNodeValue):
                return Dropped(ident, str(held))
            query, result = held
            if isinstance(result, EndpointError):
                raise query_error(result, template, step.where, ident)
            spec = step.step.documents
            media = result.form.media_type
            made = (query, result.text if spec is None else _documents(result.text, step, template), media)
            if step.answers:
                text = result.text if media == SPARQL_RESULTS_JSON else None
                columns, rows, answer = compiled.reader.read(text, plain)
                known = columns if template.answer.kind == "labels" else {*columns, *plain}  # value: either
                unknown = [name for name in compiled.reader.names if name not in known]
                if unknown:
                    raise template.error(
                        f"{unknown[0]!r} is not a column of the answer step's result "
                        f"(columns: {', '.join(columns) or 'none'})",
                        f"answer.{template.answer.kind}",
                    )
        for fill in step.fills:
            texts.append(made[fill] if fill.__class__ is int else fill.format_map(plain))  # type: ignore[union-attr]
    keep = template.keep
    if rows < keep.min_rows or (keep.max_rows is not None and rows > keep.max_rows):
        bounds = f"{keep.min_rows}..{'' if keep.max_rows is None else keep.max_rows}"
        return Dropped(ident, f"its answer query gave {rows} rows (kept: {bounds})")
    if answer is None:
        return Dropped(ident, "its answer query gave no value to read the answer from")
    phrasings = compiled.phrasings
    phrasing = phrasings[0] if len(phrasings) == 1 else phrasings[stable_index(ident, len(phrasings))]
    texts[1], texts[2] = phrasing.format_map(plain), answer
    return Instance(compiled, (*texts, *[plain[name] for name in template.parameters]))


def run_queries(compiled: CompiledTemplate, binding: Binding, run: Run, ran: Ran) -> bool:
    """Fill and run the binding's queries in step order into `ran`, up to a blank node a query cannot
    name or a failed query (False: its error is held, the run ends there)."""
    for step in compiled.steps:
        if step.query is None:
            continue
        try:
            query = step.query.fill_query(binding.values)
        except BlankNodeValue as error:
            ran.append(error)
            return True
        try:
            ran.append((query, run(query)))
        except EndpointError as error:
            ran.append((query, error))
            return False
    return True


def used_names(template: QuestionTemplate) -> set[str]:
    """Every placeholder name of the template's phrasings, id pattern and steps."""
    texts = [*template.phrasings, *(text for _, text in placeholder_fields(template))]
    return {name for text in texts for name in PLACEHOLDER.findall(text)}


def placeholder_fields(template: QuestionTemplate) -> list[tuple[str, str]]:
    """The template's fields but its phrasings that may name placeholders, each with its text."""
    fields = [("question_id", template.question_id or "")]
    for group in template.steps:
        for step in group:
            fields.append((step.where, json.dumps(step.raw, ensure_ascii=False)))
            if step.documents is not None:
                fields.append((f"{step.where}.documents.query", step.documents.query))
    return fields


def query_error(
    error: EndpointError, template: QuestionTemplate, field: str, ident: str | None
) -> TemplateError:
    """An engine's error as a TemplateError naming the template, question and field."""
    if isinstance(error, EndpointUnavailable):
        return template.error(f"the SPARQL endpoint cannot be reached: {error}", field)
    where = f" (question {ident!r})" if ident else ""
    return template.error(f"the query failed{where}: {error}", field)


def _step_shape(step: StepTemplate, slots: list[str | int]) -> dict[str, Any]:
    """The step as the corpus holds it, each text a question fills a `Slot` (after the question's own
    texts), its filling appended to `slots`: keys in the order the corpus has always written them."""

    def opened(fill: str | int) -> Slot:
        slots.append(fill)
        return Slot(_OWN_TEXTS + len(slots) - 1, fill == _OUTPUT)

    def shaped(value: Any) -> Any:
        if isinstance(value, str):
            pieces = Pieces.of(value)
            return opened(pieces.form) if pieces.names else value
        if isinstance(value, list):
            return [shaped(item) for item in value]
        if isinstance(value, dict):
            return {key: shaped(item) for key, item in value.items()}
        return value

    raw = step.raw
    made: dict[str, Any] = {"name": raw["name"]}
    if "args" in raw:
        made["args"] = {
            key: opened(_QUERY) if key == "query" and step.query is not None else shaped(item)
            for key, item in raw["args"].items()
        }
    if step.query is not None or step.documents is not None:
        made["output"] = opened(_OUTPUT)
        if step.query is not None:
            made["output_media_type"] = opened(_MEDIA_TYPE)
    for key, item in raw.items():
        if key not in made:
            made[key] = shaped(item)
    return made


def _filled(shape: Any, texts: tuple[str, ...]) -> Any:
    """`shape` with each slot replaced by its text (a new copy of every collection)."""
    if type(shape) is Slot:
        return texts[shape.index]
    if isinstance(shape, list):
        return [_filled(item, texts) for item in shape]
    if isinstance(shape, dict):
        return {key: _filled(item, texts) for key, item in shape.items()}
    return shape


def _slot_indices(shape: Any) -> list[int]:
    """The index of every slot in `shape`: the texts that make the rest of it."""
    if type(shape) is Slot:
        return [shape.index]
    items = shape.values() if isinstance(shape, dict) else shape if isinstance(shape, list) else ()
    return [index for item in items for index in _slot_indices(item)]


def _documents(text: str, step: CompiledStep, template: QuestionTemplate) -> str:
    spec, (columns, rows) = cast(DocumentsSpec, step.step.documents), rows_of(text)
    for key, column in (("id", spec.id_column), ("text", spec.text_column)):
        if column not in columns:  # else every question's documents are empty, unsaid
            where, shown = f"{step.step.where}.documents.{key}", ", ".join(columns) or "none"
            raise template.error(f"{column!r} is not a column of its query (columns: {shown})", where)
    documents = [
        {"id": str(row[spec.id_column]["value"]), "text": str(row.get(spec.text_column, {}).get("value", ""))}
        for row in rows
        if spec.id_column in row
    ]
    return json.dumps(documents, ensure_ascii=False)
