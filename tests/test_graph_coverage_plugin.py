"""`--graphrag-graph-coverage` on the example project: the terminal block, the JSON report's section and
the HTML report's Coverage tab name exactly the graph's classes and properties no reference query names.

The expected terms are found without the plugin's code: the graph's triples read by pyoxigraph's
parser, and the IRIs each reference query names read from rdflib's algebra of the query.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
import yaml
from oxigraph_server import OxigraphServer, RecordingProxy, free_port
from rdflib import URIRef
from rdflib.paths import Path as PropertyPath
from rdflib.plugins.sparql import prepareQuery
from synthetic_report import synthetic_report

from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.report.html_report import render_html
from pytest_graphrag_eval.report_model import ReportDocument

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "example_project"
GRID = EXAMPLE / "grid" / "grid.ttl"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@dataclass(frozen=True)
class Expected:
    """The terminal's and the pages' view of the example's coverage, computed independently."""

    classes: list[tuple[str, int]]  # untested, as shown: (short term, uses), most used first
    properties: list[tuple[str, int]]
    totals: str
    templates: list[tuple[str, int, int]]  # (template, classes named, properties named)


@dataclass(frozen=True)
class Run:
    returncode: int
    output: str
    report: dict[str, Any]
    page: str

    @property
    def block(self) -> list[str]:
        """The terminal's coverage block: its first line and the indented lines under it."""
        lines = self.output.splitlines()
        start = next(index for index, line in enumerate(lines) if line.startswith("graph coverage:"))
        end = start + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        return lines[start:end]


def _walk(node: object, found: set[str]) -> None:
    if isinstance(node, URIRef):
        found.add(str(node))
    elif isinstance(node, dict):  # rdflib's algebra nodes (CompValue) are dicts
        for value in node.values():
            _walk(value, found)
    elif isinstance(node, (list, tuple, set)):
        for value in node:
            _walk(value, found)
    elif isinstance(node, PropertyPath):
        for value in vars(node).values():
            _walk(value, found)


@pytest.fixture(scope="module")
def expected() -> Expected:
    uses: Counter[tuple[str, str]] = Counter()
    for triple in pyoxigraph.parse(path=GRID, format=pyoxigraph.RdfFormat.TURTLE, base_iri=GRID.as_uri()):
        uses["property", triple.predicate.value] += 1
        if triple.predicate.value == RDF_TYPE and isinstance(triple.object, pyoxigraph.NamedNode):
            uses["class", triple.object.value] += 1
    named: dict[str, set[str]] = {}
    prefixes: dict[str, str] = {}
    for template in yaml.safe_load(EXAMPLE.joinpath("corpus.yaml").read_text("utf-8")):
        found = named.setdefault(template["template_id"], set())
        for question in template["questions"]:
            for step in (step for group in question["reference_steps"] for step in group):
                if step["name"] == "sparql_query":
                    query = prepareQuery(step["args"]["query"])
                    _walk(query.algebra, found)
                    prefixes.update(
                        (str(iri), name) for name, iri in query.prologue.namespace_manager.namespaces()
                    )
    everything = set().union(*named.values())

    def short(iri: str) -> str:
        namespace = max((ns for ns in prefixes if iri.startswith(ns)), key=len, default=None)
        return f"{prefixes[namespace]}:{iri[len(namespace) :]}" if namespace else f"<{iri}>"

    def untested(kind: str) -> list[tuple[str, int]]:
        terms = [(iri, count) for (of, iri), count in uses.items() if of == kind and iri not in everything]
        return [(short(iri), count) for iri, count in sorted(terms, key=lambda term: (-term[1], term[0]))]

    classes = {iri for kind, iri in uses if kind == "class"}
    properties = {iri for kind, iri in uses if kind == "property"}
    return Expected(
        untested("class"),
        untested("property"),
        f"graph coverage: reference queries name {len(classes & everything)} of {len(classes)} classes "
        f"and {len(properties & everything)} of {len(properties)} properties",
        [(tid, len(classes & found), len(properties & found)) for tid, found in named.items()],
    )


def example_pytest(*options: str) -> subprocess.CompletedProcess[str]:
    """`pytest example_project` with the graph's coverage asked for, from the repository's root."""
    command = [sys.executable, "-m", "pytest", str(EXAMPLE), "-p", "no:cacheprovider", "-q"]
    return subprocess.run(
        [*command, "--graphrag-graph-coverage", *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def run_example(folder: Path, *options: str) -> Run:
    """A replay of the example's recording with both reports written into `folder`."""
    report, page = folder / "report.json", folder / "report.html"
    completed = example_pytest(
        f"--graphrag-responses={EXAMPLE / 'recordings' / 'responses.jsonl'}",
        f"--graphrag-report={report}",
        f"--graphrag-html={page}",
        *options,
    )
    output = completed.stdout + completed.stderr
    assert report.exists(), output
    return Run(completed.returncode, output, json.loads(report.read_text("utf-8")), page.read_text("utf-8"))


def shown_terms(listed: str) -> list[tuple[str, int]]:
    """`cim:A (3), cim:B (1)` as [(cim:A, 3), (cim:B, 1)]."""
    return [(term, int(count)) for term, count in re.findall(r"(\S+) \((\d+)\)", listed)]


def page_rows(page: str, table: str) -> list[list[str]]:
    """The cells of each body row of the Coverage tab's table `table` (data-testid), unescaped."""
    section = page[page.index('<section id="coverage"') :]
    body = section[section.index(f'data-testid="{table}"') :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_example(tmp_path_factory.mktemp("embedded"), f"--graphrag-sparql-endpoint={GRID}")


@pytest.fixture(scope="module")
def oxigraph() -> Iterator[OxigraphServer]:
    with OxigraphServer([GRID]) as server:
        yield server


def test_the_terminal_names_exactly_the_untested_terms(embedded: Run, expected: Expected) -> None:
    assert embedded.returncode == 0, embedded.output
    block = embedded.block
    assert block[0] == expected.totals
    assert block[1] == f"  untested classes ({len(expected.classes)}, by uses): " + ", ".join(
        f"{term} ({uses})" for term, uses in expected.classes
    )
    assert shown_terms(block[2].split(": ", 1)[1]) == expected.properties
    assert block[3:] == [f"  {tid}: {c} classes, {p} properties" for tid, c, p in expected.templates]
    assert expected.classes and expected.properties  # the example leaves some of each untested


def test_the_reports_name_exactly_the_untested_terms(embedded: Run, expected: Expected) -> None:
    section = embedded.report["metadata"]["graph_coverage"]
    assert [
        (term, section["uses"]["classes"][term]) for term in section["untested_classes"]
    ] == expected.classes
    assert section["untested_properties"] == [term for term, _ in expected.properties]
    assert list(section["templates"]) == [tid for tid, _, _ in expected.templates]
    page = embedded.page
    assert '<a href="#coverage" data-tab="coverage">Coverage</a>' in page
    assert page_rows(page, "untested-classes") == [[term, str(uses)] for term, uses in expected.classes]
    assert page_rows(page, "untested-properties") == [[term, str(uses)] for term, uses in expected.properties]
    assert page_rows(page, "coverage-templates") == [
        [tid, str(c), str(p)] for tid, c, p in expected.templates
    ]


def test_under_xdist_the_controller_shows_the_same_block(tmp_path: Path, embedded: Run) -> None:
    # With the references checked too, the controller covers the graph on the store it shared with
    # its workers.
    run = run_example(
        tmp_path, f"--graphrag-sparql-endpoint={GRID}", "--graphrag-check-references", "-n", "2"
    )
    assert run.returncode == 0, run.output
    assert run.block == embedded.block
    assert run.report["metadata"]["graph_coverage"] == embedded.report["metadata"]["graph_coverage"]


def test_an_oxigraph_server_under_xdist_is_asked_twice_by_the_controller_alone(
    tmp_path: Path, embedded: Run, oxigraph: OxigraphServer
) -> None:
    with RecordingProxy(oxigraph.url) as proxy:
        run = run_example(tmp_path, f"--graphrag-sparql-endpoint={proxy.url}", "-n", "2")
    assert run.returncode == 0, run.output
    assert run.block == embedded.block
    # the two aggregate queries, once per run: the workers sent none
    assert len(proxy.requests) == 2, [request.body[:80] for request in proxy.requests]


def test_an_unreachable_endpoint_is_one_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    run = run_example(tmp_path, f"--graphrag-sparql-endpoint={url}")
    assert run.returncode == 0, run.output
    warnings = [line for line in run.output.splitlines() if "coverage was not computed" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ") and "connection refused" in warnings[0]
    assert "Traceback" not in run.output and "graph coverage:" not in run.output
    error = run.report["metadata"]["graph_coverage"]["error"]
    shown = re.search(r'data-testid="coverage-error">([^<]*)</p>', run.page)
    assert "connection refused" in error and shown is not None
    assert html.unescape(shown[1]) == f"The graph's coverage was not computed: {error}"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ((), "ERROR: --graphrag-graph-coverage needs a graph: pass --graphrag-sparql-endpoint"),
        (
            (f"--graphrag-sparql-endpoint={EXAMPLE / 'grid' / 'missing.ttl'}",),
            "missing.ttl: no such RDF file or folder",
        ),
    ],
)
def test_a_graph_coverage_without_a_graph_to_open_is_a_usage_error(
    options: tuple[str, ...], said: str
) -> None:
    completed = example_pytest(*options)
    assert completed.returncode == pytest.ExitCode.USAGE_ERROR, completed.stdout + completed.stderr
    assert said in completed.stderr and "Traceback" not in completed.stderr


def test_a_malformed_coverage_section_is_refused_naming_its_field() -> None:
    report = synthetic_report(4, templates=2)
    report["metadata"]["graph_coverage"] = {
        **{"classes": 1, "properties": 1, "tested_classes": 0, "tested_properties": 1},
        **{"untested_classes": ["ex:A"], "untested_properties": [], "uses": {"classes": {"ex:A": 1}}},
        "templates": {"t": {"tested_classes": "many", "tested_properties": 1}},
    }
    with pytest.raises(InputError, match=r"metadata\.graph_coverage\.uses\.properties.*must be an object"):
        render_html(ReportDocument.from_json(report, "report.json"))
    report["metadata"]["graph_coverage"]["uses"]["properties"] = {}
    with pytest.raises(InputError, match=r"metadata\.graph_coverage\.templates\.t\.tested_classes"):
        render_html(ReportDocument.from_json(report, "report.json"))
