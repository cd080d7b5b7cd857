"""The graph's coverage by the run's reference queries (`--graphrag-graph-coverage`), computed once where
the run ends over every question of its corpus files, selected or not: `-k` or a shard does not change
what the corpus tests. A graph that cannot answer costs the run a warning, not its verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.generate.coverage import corpus_coverage, coverage_lines, graph_terms
from pytest_graphrag_eval.graph.endpoint import SparqlEndpoint
from pytest_graphrag_eval.report.html_report.graph_coverage import GRAPH_COVERAGE_KEY

SHOWN = 10  # untested terms, and templates, the terminal lists: the reports hold every one


@dataclass(frozen=True)
class GraphCoverage:
    """The run's coverage: the report's section (or why there is none) and the terminal's block."""

    section: JsonObject
    lines: tuple[tuple[str, str], ...]  # (text, colour)
    warnings: tuple[str, ...] = ()

    @property
    def metadata(self) -> JsonObject:
        """What the report's metadata records of it (the HTML report's Coverage tab reads it there)."""
        return {GRAPH_COVERAGE_KEY: self.section}


def cover_graph(endpoint: Callable[[], SparqlEndpoint], corpora: Iterable[Corpus]) -> GraphCoverage:
    """The coverage of `corpora` over the graph `endpoint()` opens (or has open)."""
    try:
        terms = graph_terms(endpoint())
    except GraphragEvalError as error:  # unreachable, refused, timed out, or files that do not load
        warning = f"the graph's coverage was not computed: {error}"
        return GraphCoverage({"error": str(error)}, (("", ""), (f"warning: {warning}", "yellow")), (warning,))
    coverage = corpus_coverage(corpora, terms)
    lines = coverage_lines(coverage, SHOWN, templates_shown=SHOWN)
    return GraphCoverage(coverage.to_dict(), (("", ""), *((line, "") for line in lines)))
