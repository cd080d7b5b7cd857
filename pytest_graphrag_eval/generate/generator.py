"""A template file run against a graph: candidates found, sampled, instantiated, checked, deduplicated.

`generate` also says what was not made and why; `plan` is the dry run, running no reference query.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.formats.atomic import write_bytes_atomic
from pytest_graphrag_eval.generate.answer_reader import rows_of
from pytest_graphrag_eval.generate.corpus_text import corpus_header, yaml_items
from pytest_graphrag_eval.generate.instantiate import (
    Binding,
    CompiledTemplate,
    Dropped,
    Instance,
    Ran,
    Run,
    compile_template,
    instantiate,
    placeholder_fields,
    query_error,
    run_queries,
    unbound,
)
from pytest_graphrag_eval.generate.placeholders import PLACEHOLDER
from pytest_graphrag_eval.generate.sampling import sampling_order
from pytest_graphrag_eval.generate.templates import QuestionTemplate, TemplateFile
from pytest_graphrag_eval.graph.endpoint import EndpointError, SparqlEndpoint

_COUNT_TRIPLES = "SELECT (COUNT(*) AS ?triples) WHERE { ?s ?p ?o }"
_RUN_AHEAD = 512  # questions whose queries are run ahead at most: their results are held meanwhile


@dataclass
class TemplateOutcome:
    """What one template gave."""

    template: QuestionTemplate
    candidates: int
    questions: list[Instance] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    duplicates: int = 0


@dataclass(frozen=True)
class Generation:
    """A template file's questions over one graph."""

    templates: TemplateFile
    graph: str
    outcomes: tuple[TemplateOutcome, ...]

    def questions(self) -> list[Instance]:
        return [question for outcome in self.outcomes for question in outcome.questions]

    def write(self, path: Path, source: str) -> None:
        """Write the corpus file atomically, a question at a time: no copy of the whole text is made;
        `source` names the template file in its header."""
        write_bytes_atomic(path, (chunk.encode("utf-8") for chunk in self._corpus_chunks(source)))

    def _corpus_chunks(self, source: str) -> Iterator[str]:
        """The corpus file's text, each question written into its template's skeleton."""
        yield corpus_header(source)
        for outcome in self.outcomes:
            if outcome.questions:
                entry: dict[str, Any] = {"template_id": outcome.template.template_id}
                if outcome.template.thresholds is not None:
                    entry["thresholds"] = outcome.template.thresholds
                yield yaml_items([entry], "") + "  questions:\n"
                for question in outcome.questions:
                    yield "".join(question.yaml())


def graph_fingerprint(endpoint: SparqlEndpoint) -> str:
    """The content hash of the graph's files (embedded store), else its URL and triple count."""
    description = endpoint.describe()
    content_hash = description.get("content_hash")
    if isinstance(content_hash, str):
        return content_hash
    try:
        _, rows = rows_of(endpoint.execute(_COUNT_TRIPLES).text)
        triples = rows[0]["triples"]["value"] if rows else "?"
    except Exception:  # a fingerprint is a record, not a requirement
        triples = "?"
    return f"{description.get('url', 'graph')} ({triples} triples)"


def candidate_bindings(
    templates: TemplateFile, compiled: CompiledTemplate, endpoint: SparqlEndpoint
) -> list[Binding]:
    """The template's candidate rows as bindings, checked against what the template uses."""
    template = compiled.template
    if template.candidates is None:
        return [compiled.bind({})]
    try:
        result = endpoint.execute(templates.prefix_header + template.candidates)
    except EndpointError as error:
        raise query_error(error, template, "candidates", None) from None
    columns, rows = rows_of(result.text)
    if not rows:
        raise template.error(
            "the query returns nothing: no candidate values for the parameters", "candidates"
        )
    _check_columns(template, set(columns))
    return [
        compiled.bind({name: term for name, term in row.items() if isinstance(term, dict)}) for row in rows
    ]


def generate(
    templates: TemplateFile,
    endpoint: SparqlEndpoint,
    *,
    previous_ids: Collection[str] = (),
    phrasings: Mapping[str, tuple[str, ...]] | None = None,
) -> Generation:
    """Every template's questions; `previous_ids` are tried first, `phrasings` replace a template's
    own (its phrasings and their kept paraphrases)."""
    graph = graph_fingerprint(endpoint)
    texts: dict[str, str] = {}
    ids: dict[str, tuple[str, str]] = {}  # by question id: its template and the text it was made of
    outcomes = []
    for template in templates.templates:
        if phrasings and template.template_id in phrasings:
            template = dataclasses.replace(template, phrasings=phrasings[template.template_id])
        compiled = compile_template(template, templates.prefix_header, graph)
        bindings = candidate_bindings(templates, compiled, endpoint)
        outcome = TemplateOutcome(template, len(bindings))
        position = {binding.question_id: index for index, binding in reversed(list(enumerate(bindings)))}
        order = _try_order(template, bindings, previous_ids)
        results: set[object] = set()
        held: dict[str, Ran] = {}
        for at, binding in enumerate(order):
            wanted = None if template.sample.count is None else template.sample.count - len(outcome.questions)
            if wanted is not None and wanted <= 0:
                break
            ident = binding.question_id
            ran = held.pop(ident, None)  # a question run ahead is bound and its id not yet taken
            if ran is None:
                if not binding.complete:  # before its id is compared: that id lacks the value
                    outcome.dropped.append(unbound(binding, compiled.needed))
                    continue
                if ident in ids:  # a duplicate only when its id is made of the same values
                    if ids[ident] != (template.template_id, shown := compiled.id_source(binding)):
                        raise template.error(
                            f"gives the question id {ident!r} to {shown!r}, as template {ids[ident][0]!r} "
                            f"does to {ids[ident][1]!r}; make the id patterns tell them apart",
                            "question_id",
                        )
                    outcome.duplicates += 1
                    continue
                held = _run_ahead(compiled, order[at:], ids, wanted, endpoint.execute)
                ran = held.pop(ident)
            made = instantiate(compiled, binding, ran)
            if isinstance(made, Dropped):
                outcome.dropped.append(made)
                continue
            outputs = compiled.output_key(made.texts)
            if made.texts[1] in texts or outputs in results:
                outcome.duplicates += 1
                continue
            texts[made.texts[1]] = ident
            ids[ident] = (template.template_id, compiled.id_source(binding))
            results.add(outputs)
            outcome.questions.append(made)
        outcome.questions.sort(key=lambda question: position[question.texts[0]])
        outcomes.append(outcome)
    return Generation(templates, graph, tuple(outcomes))


def _run_ahead(
    compiled: CompiledTemplate, bindings: list[Binding], ids: Collection[str], wanted: int | None, run: Run
) -> dict[str, Ran]:
    """The results, by question id, of the next questions' queries (from `bindings[0]`, unbound ones skipped,
    up to `wanted`, `_RUN_AHEAD` or an id taken) run back to back: the store's caches stay warm. A failed
    query ends the run; it is raised as its question's when that question is made, as one by one."""
    limit = _RUN_AHEAD if wanted is None else min(wanted, _RUN_AHEAD)
    held: dict[str, Ran] = {}
    for binding in bindings:
        if len(held) >= limit:
            break
        if not binding.complete:
            continue
        if binding.question_id in ids or binding.question_id in held:
            break
        ran: Ran = []
        held[binding.question_id] = ran
        if not run_queries(compiled, binding, run, ran):
            break
    return held


def plan(
    templates: TemplateFile, endpoint: SparqlEndpoint
) -> list[tuple[QuestionTemplate, int, list[tuple[str, str]]]]:
    """The dry run: per template, its number of candidates and the questions it would try first (up to
    its count); no reference query is run, so keep-rules and duplicates are not applied yet."""
    planned = []
    for template in templates.templates:
        compiled = compile_template(template, templates.prefix_header, "")
        bindings = candidate_bindings(templates, compiled, endpoint)
        order = _try_order(template, bindings)
        chosen = order[: template.sample.count] if template.sample.count is not None else order
        questions = [
            (binding.question_id, compiled.phrasings[0].format_map(binding.plain))
            for binding in chosen
            if all(name in binding.values for name in template.parameters)
        ]
        planned.append((template, len(bindings), questions))
    return planned


def _try_order(
    template: QuestionTemplate, bindings: list[Binding], previous: Collection[str] = ()
) -> list[Binding]:
    def stratum(binding: Binding) -> str:
        return binding.plain.get(template.sample.stratify or "", "")

    return sampling_order(bindings, template.sample, stratum, lambda binding: binding.question_id, previous)


def _check_columns(template: QuestionTemplate, columns: set[str]) -> None:
    """Every placeholder must be a column of the candidates query: named by field when not."""
    missing = [name for name in template.parameters if name not in columns]
    if missing:
        raise template.error(
            f"{missing[0]!r} is not a column of the candidates query (columns: {', '.join(sorted(columns))})",
            "parameters",
        )
    for where, text in placeholder_fields(template):
        unknown = [name for name in PLACEHOLDER.findall(text) if name not in columns]
        if unknown:
            raise template.error(
                f"names {{{{{unknown[0]}}}}}, which is not a column of the candidates query "
                f"(columns: {', '.join(sorted(columns))})",
                where,
            )
