"""Which classes and properties of a graph no reference query names: the parts no question tests.

A query names an IRI written in it (`<iri>`, a prefixed name, `a`); strings, comments and PREFIX
lines name nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.generate.answer_reader import rows_of
from pytest_graphrag_eval.generate.templates import SPARQL_STEP
from pytest_graphrag_eval.graph.endpoint import EndpointError, SparqlEndpoint

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_CLASSES = "SELECT ?term (COUNT(*) AS ?uses) WHERE { ?s a ?term FILTER(isIRI(?term)) } GROUP BY ?term"
_PROPERTIES = "SELECT ?term (COUNT(*) AS ?uses) WHERE { ?s ?term ?o } GROUP BY ?term"
_TOKENS = re.compile(
    r"""(?P<skip>"{3}.*?"{3}|'{3}.*?'{3}|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\#[^\n]*)"""
    r"""|(?P<declaration>(?i:PREFIX)\s+(?P<name>[A-Za-z][\w.-]*)?:\s*<(?P<namespace>[^<>\s]*)>|(?i:BASE)\s+<[^<>\s]*>)"""
    r"""|<(?P<iri>[^<>"{}|^`\\\s]*)>"""
    r"""|(?<![\w?$:])(?P<prefix>[A-Za-z][\w-]*(?:\.[\w-]+)*)?:(?P<local>(?:[\w-]|\.(?=[\w-]))*)"""
    r"""|(?<![\w?$:])(?P<a>a)(?![\w:])""",
    re.DOTALL,
)


@dataclass(frozen=True)
class GraphTerms:
    """The graph's classes and properties, each with its number of uses."""

    classes: Mapping[str, int]
    properties: Mapping[str, int]


@dataclass(frozen=True)
class Coverage:
    """What the reference queries name of the graph, overall and per template."""

    graph: GraphTerms
    named: frozenset[str]
    per_template: Mapping[str, frozenset[str]]
    prefixes: Mapping[str, str]

    def untested_classes(self, template_id: str | None = None) -> list[str]:
        """The graph's classes no reference query (of `template_id`) names, most used first."""
        return self._untested(self.graph.classes, template_id)

    def untested_properties(self, template_id: str | None = None) -> list[str]:
        return self._untested(self.graph.properties, template_id)

    def _untested(self, terms: Mapping[str, int], template_id: str | None) -> list[str]:
        named = self.named if template_id is None else self.per_template[template_id]
        return sorted((term for term in terms if term not in named), key=lambda term: (-terms[term], term))

    def short(self, iri: str) -> str:
        """`cim:Substation` for an IRI under a prefix the queries declare, else `<iri>`."""
        for name, namespace in self.prefixes.items():
            if namespace and iri.startswith(namespace) and re.fullmatch(r"[\w.-]*", iri[len(namespace) :]):
                return f"{name}:{iri[len(namespace) :]}"
        return f"<{iri}>"

    def to_dict(self) -> dict[str, object]:
        """The JSON form (the command's `--json`, the report's `metadata.graph_coverage`): counts and
        the untested terms, overall (with their uses in the graph) and per template."""

        def part(template_id: str | None) -> dict[str, object]:
            classes, properties = self.untested_classes(template_id), self.untested_properties(template_id)
            return {
                "untested_classes": [self.short(term) for term in classes],
                "untested_properties": [self.short(term) for term in properties],
                "tested_classes": len(self.graph.classes) - len(classes),
                "tested_properties": len(self.graph.properties) - len(properties),
            }

        return {
            "classes": len(self.graph.classes),
            "properties": len(self.graph.properties),
            **part(None),
            "uses": {
                "classes": {self.short(term): self.graph.classes[term] for term in self.untested_classes()},
                "properties": {
                    self.short(term): self.graph.properties[term] for term in self.untested_properties()
                },
            },
            "templates": {template_id: part(template_id) for template_id in self.per_template},
        }


def graph_terms(endpoint: SparqlEndpoint) -> GraphTerms:
    """The classes and properties of the graph behind `endpoint`."""
    found: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for terms, query in zip(found, (_CLASSES, _PROPERTIES), strict=True):
        for row in rows_of(endpoint.execute(query).text)[1]:
            uses = str(row.get("uses", {}).get("value"))
            if not re.fullmatch("[0-9]{1,18}", uses):  # the endpoint's answer is data: its error, not ours
                raise EndpointError(f"the endpoint counted {uses[:40]!r} uses, not a whole number")
            if "term" in row and row["term"].get("type") == "uri":
                terms[str(row["term"]["value"])] = int(uses)
    return GraphTerms(*found)


def named_iris(query: str) -> tuple[set[str], dict[str, str]]:
    """The IRIs a query names, and its prefixes."""
    prefixes: dict[str, str] = {}
    named: set[str] = set()
    for match in _TOKENS.finditer(query):
        if match["declaration"] and match["namespace"] is not None:
            prefixes[match["name"] or ""] = match["namespace"]
        elif match["iri"] is not None:
            named.add(match["iri"])
        elif match["a"]:
            named.add(RDF_TYPE)
        elif match["local"] is not None and not match["skip"] and (match["prefix"] or "") in prefixes:
            named.add(prefixes[match["prefix"] or ""] + match["local"])
    return named, prefixes


def reference_queries(corpus: Corpus) -> Iterable[tuple[str, str]]:
    """(template id, query) of every executable reference step of the corpus."""
    for question in corpus.questions():
        for group in question.reference_steps or []:
            for step in group:
                args = step.get("args")
                query = args.get("query") if isinstance(args, dict) else None
                if step.get("name") == SPARQL_STEP and isinstance(query, str):
                    yield question.template_id, query


def corpus_coverage(corpora: Iterable[Corpus], graph: GraphTerms) -> Coverage:
    """What the corpora's reference queries name of `graph`."""
    per_template: dict[str, set[str]] = {}
    prefixes: dict[str, str] = {}
    read: dict[str, set[str]] = {}  # a query repeated by many questions is read once
    for corpus in corpora:
        for template in corpus.templates:
            per_template.setdefault(template.template_id, set())
        for template_id, query in reference_queries(corpus):
            named = read.get(query)
            if named is None:
                named, declared = named_iris(query)
                read[query] = named
                for name, namespace in declared.items():
                    prefixes.setdefault(name, namespace)
            per_template[template_id] |= named
    frozen = {template_id: frozenset(named) for template_id, named in per_template.items()}
    return Coverage(graph, frozenset().union(*frozen.values()), frozen, prefixes)


def coverage_lines(coverage: Coverage, shown: int = 10, templates_shown: int | None = None) -> list[str]:
    """The coverage for a terminal, overall then per template; graph and corpus text is shown with
    control characters escaped."""
    classes, properties = coverage.untested_classes(), coverage.untested_properties()
    graph = coverage.graph
    lines = [
        f"graph coverage: reference queries name {len(graph.classes) - len(classes)} of {len(graph.classes)} "
        f"classes and {len(graph.properties) - len(properties)} of {len(graph.properties)} properties"
    ]
    kinds = (("classes", classes, graph.classes), ("properties", properties, graph.properties))
    for label, terms, uses in kinds:
        if terms:
            listed = ", ".join(f"{coverage.short(term)} ({uses[term]})" for term in terms[:shown])
            more = f", and {len(terms) - shown} more" if len(terms) > shown else ""
            lines.append(f"  untested {label} ({len(terms)}, by uses): {listed}{more}")
    template_ids = list(coverage.per_template)[:templates_shown]
    for template_id in template_ids:
        tested_classes = len(graph.classes) - len(coverage.untested_classes(template_id))
        tested_properties = len(graph.properties) - len(coverage.untested_properties(template_id))
        lines.append(f"  {template_id}: {tested_classes} classes, {tested_properties} properties")
    if len(coverage.per_template) > len(template_ids):
        lines.append(f"  and {len(coverage.per_template) - len(template_ids)} more templates")
    return [terminal_safe(line) for line in lines]
