"""The knowledge graph in the run: reference checks, live references and re-executed agent queries, done
per question before scoring by one `GraphStage` per process (which opens the endpoint once).
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.corpus.reference_steps import step_path
from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.graph.corpus_update import update_corpus_text
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint, rdf_files
from pytest_graphrag_eval.graph.endpoint import EndpointError, EndpointUnavailable, SparqlEndpoint
from pytest_graphrag_eval.graph.factory import identify_graph, is_remote, open_endpoint
from pytest_graphrag_eval.graph.references import (
    QuestionReferences,
    check_question,
    check_questions,
    reexecute_agent_steps,
    with_failed_references,
    with_fresh_references,
)
from pytest_graphrag_eval.graph.service import ServicePolicy
from pytest_graphrag_eval.graph.summary import (
    describe_step,
    output_updates,
    question_references,
    references_section,
    stale_lines,
)
from pytest_graphrag_eval.run.configuration import RunConfiguration
from pytest_graphrag_eval.run.pipeline import GraphRun

GRAPH_KEY = "graph"
COVERAGE_SHOWN = 10  # untested terms, and templates, the terminal lists: the reports hold every one


class GraphStage:
    """Per-process graph work done on each question before it is scored."""

    def __init__(self, settings: RunConfiguration, base_dir: Path):
        self.settings = settings
        self.check = settings.check_references or settings.update_references or settings.execute_reference
        self._endpoint: SparqlEndpoint | None = None
        self._base_dir = base_dir
        self._opening = threading.Lock()
        self._checked: dict[str, QuestionReferences | EndpointUnavailable] = {}
        self.unavailable: str | None = None
        self.shared_store: str | None = None  # an xdist worker: the store its controller loaded
        self._shared_folder: tempfile.TemporaryDirectory[str] | None = None
        self.service = ServicePolicy.parse(settings.sparql_service)

    @property
    def endpoint(self) -> SparqlEndpoint:
        """The endpoint, opened on first use (an embedded store is loaded then, once)."""
        spec = self.settings.sparql_endpoint
        assert spec is not None, "a graph stage is made for a run with a graph"
        with self._opening:
            if self._endpoint is None and self.shared_store is not None:
                self._endpoint = EmbeddedEndpoint.open_shared(
                    Path(self.shared_store), Path(spec), self.service
                )
            if self._endpoint is None:
                self._endpoint = open_endpoint(
                    spec,
                    base_dir=self._base_dir,
                    options={
                        "timeout": self.settings.sparql_timeout,
                        "concurrency": self.settings.sparql_concurrency,
                    },
                    base_iri=self.settings.sparql_base_iri,
                    service=self.service,
                )
            return self._endpoint

    def check_remote(self) -> None:
        """Open an http(s) endpoint now (no request is sent): a bad URL or credentials fail at start-up."""
        spec = self.settings.sparql_endpoint
        if spec is not None and is_remote(spec):
            self.endpoint  # noqa: B018 - constructing it validates the URL and the credentials

    def share_with_workers(self) -> str | None:
        """xdist controller: load an embedded graph once into a store on disk for the workers to open
        read-only (in a tenth of the loading time); its folder, None for an http(s) endpoint."""
        spec = self.settings.sparql_endpoint
        if spec is None or is_remote(spec):
            return None
        if self._shared_folder is None:
            self._shared_folder = tempfile.TemporaryDirectory(prefix="graphrag-graph-")
            store = Path(self._shared_folder.name) / "store"
            EmbeddedEndpoint.load(Path(spec), directory=store, base_iri=self.settings.sparql_base_iri).close()
            self.shared_store = str(store)
        return self.shared_store

    def prefetch(self, questions: Iterable[Question]) -> None:
        """Check the references of these questions now, concurrently (a run without xdist)."""
        if not self.check:
            return
        self._checked.update(
            check_questions(
                questions,
                self.endpoint,
                concurrency=self.settings.sparql_concurrency,
                require_queries=self.settings.execute_reference,
            )
        )

    def prepare(
        self, question: Question, response: Mapping[str, Any] | None
    ) -> tuple[Question, Mapping[str, Any] | None, dict[str, Any], str | None]:
        """(question to score, response to score, result keys to add, the question's error or None)."""
        graph: dict[str, Any] = {}
        problem = None
        try:
            if self.check:
                check = self._checked.get(question.question_id) or self._check(question)
                if isinstance(check, EndpointUnavailable):
                    raise check
                graph["references"] = check.to_dict()
                if check.errors:
                    problem = "; ".join(check.errors)
                question = (
                    with_fresh_references(question, check)
                    if self.settings.execute_reference
                    else with_failed_references(question, check)
                )
            if self.settings.execute_agent and response is not None:
                response, summary = reexecute_agent_steps(response, self.endpoint)
                graph["agent_steps"] = summary
        except EndpointUnavailable as error:
            self.unavailable = str(error)
            raise
        return question, response, ({GRAPH_KEY: graph} if graph else {}), problem

    def _check(self, question: Question) -> QuestionReferences:
        """Check one question now (an xdist worker checks its own questions as they come), once."""
        check = check_question(question, self.endpoint, require_queries=self.settings.execute_reference)
        self._checked[question.question_id] = check  # repeated attempts reuse it
        return check

    def close(self) -> None:
        if self._endpoint is not None:
            self._endpoint.close()
        if self._shared_folder is not None:
            self._shared_folder.cleanup()


def check_graph_location(settings: RunConfiguration, root: Path) -> None:
    """For a graph the run opens only at its end (for its coverage): its files or URL checked now."""
    if settings.sparql_endpoint is None:
        return
    if not is_remote(settings.sparql_endpoint):
        rdf_files(Path(settings.sparql_endpoint))
        return
    stage = GraphStage(settings, root)
    try:
        stage.check_remote()
    finally:
        stage.close()


def finish_graph_run(
    settings: RunConfiguration,
    stage: GraphStage | None,
    baseline: dict[str, Any] | None,
    root: Path,
    results: list[dict[str, Any]],
    corpora: Callable[[], Sequence[Corpus]] = tuple,
) -> GraphRun:
    """After the last question (controller or plain run): what the graph adds to the report, the corpus
    files updated and the coverage computed when asked, and the terminal lines saying so."""
    if not (settings.uses_graph or settings.graph_coverage) or settings.sparql_endpoint is None:
        warnings = _graph_change_warning(baseline, None)
        return GraphRun(
            warnings=warnings, lines=tuple((f"warning: {warning}", "yellow") for warning in warnings)
        )
    try:
        identity: dict[str, Any] = identify_graph(settings.sparql_endpoint, root)
    except EndpointError as error:
        identity = {"error": str(error)}
    identity = {
        **identity,
        "used_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "execute": settings.execute,
    }
    references = references_section(results, identity) if stage and stage.check else None
    lines: list[tuple[str, str]] = []
    if references is not None:
        lines.append(("", ""))
        lines.append((_references_headline(references, identity), "red" if references["stale"] else "green"))
        lines.extend((line, "") for line in stale_lines(references))
    if stage is not None and stage.unavailable:
        lines.append((f"graphrag-eval: {stage.unavailable}", "red"))
    metadata: dict[str, Any] = {"graph": identity}
    coverage_warnings: tuple[str, ...] = ()
    if settings.graph_coverage:
        coverage, coverage_lines, coverage_warnings = _cover_graph(settings, stage, root, corpora())
        metadata.update(coverage)
        lines.extend(coverage_lines)
    failures = 0
    if settings.update_references:
        update_lines, failures = _update_corpus_files(root, results)
        lines.extend(update_lines)
    warnings = _graph_change_warning(baseline, identity)
    lines.extend((f"warning: {warning}", "yellow") for warning in warnings)
    return GraphRun(metadata, references, (*coverage_warnings, *warnings), tuple(lines), failures)


def _cover_graph(
    settings: RunConfiguration, stage: GraphStage | None, root: Path, corpora: Sequence[Corpus]
) -> tuple[JsonObject, list[tuple[str, str]], tuple[str, ...]]:
    """`--graphrag-graph-coverage`, computed once where the run ends over every question of its corpus
    files, selected or not (`-k` or a shard does not change what the corpus tests), on the endpoint the
    run opened, else on one opened for it: the report metadata's section, the terminal lines and the
    warnings. A graph that cannot answer costs the run a warning, not its verdict."""
    from pytest_graphrag_eval.generate.coverage import corpus_coverage, coverage_lines, graph_terms
    from pytest_graphrag_eval.report.html_report.graph_coverage import GRAPH_COVERAGE_KEY

    opened = stage if stage is not None else GraphStage(settings, root)
    try:
        terms = graph_terms(opened.endpoint)
    except GraphragEvalError as error:  # unreachable, refused, timed out, or files that do not load
        warning = f"the graph's coverage was not computed: {error}"
        return (
            {GRAPH_COVERAGE_KEY: {"error": str(error)}},
            [("", ""), (f"warning: {warning}", "yellow")],
            (warning,),
        )
    finally:
        if stage is None:
            opened.close()
    coverage = corpus_coverage(corpora, terms)
    lines = coverage_lines(coverage, COVERAGE_SHOWN, templates_shown=COVERAGE_SHOWN)
    return {GRAPH_COVERAGE_KEY: coverage.to_dict()}, [("", ""), *((line, "") for line in lines)], ()


def _references_headline(section: dict[str, Any], identity: dict[str, Any]) -> str:
    graph = identity.get("url") or identity.get("location") or "the graph"
    return (
        f"references: {section['steps_checked']} reference queries of {section['questions_checked']} "
        f"questions executed on {graph}: {section['stale_references']} question(s) stale, "
        f"{section['failed_queries']} query(ies) failed"
    )


def _update_corpus_files(root: Path, results: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], int]:
    """Rewrite the stale and missing outputs in each corpus file; a line per change, and the failures."""
    lines: list[tuple[str, str]] = []
    failures = 0
    descriptions = {
        (str(result["question_id"]), str(step.get("step"))): describe_step(step)
        for result in results
        if (refs := question_references(result)) and refs.get("stale")
        for step in refs.get("steps", [])
        if step.get("status") in ("stale", "missing")
    }
    for file, updates in output_updates(results).items():
        path = root / file
        try:
            text = path.read_bytes().decode("utf-8")
            new_text, problems = update_corpus_text(text, updates)
            if new_text != text:
                write_text_atomic(path, new_text)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            lines.append((f"update-references: could not update {file}: {error}", "red"))
            failures += 1
            continue
        lines.extend((f"update-references: {file}: {problem}", "red") for problem in problems)
        failures += len(problems)
        failed = {problem.split(":")[0] for problem in problems}
        for update in updates:
            where = step_path(update.group, update.index)
            if f"question {update.question_id!r} {where}" in failed:
                continue
            change = descriptions.get((update.question_id, where), "updated")
            lines.append((f"updated {file}: {update.question_id} {where}: {change}", "green"))
    return lines, failures


def _graph_change_warning(baseline_report: Any, current: dict[str, Any] | None) -> tuple[str, ...]:
    """A warning when this run and its baseline ran on different graphs (or only one of them on one)."""
    if baseline_report is None:
        return ()
    baseline = baseline_report.get("metadata", {}).get("graph")
    before = _graph_name(baseline) if isinstance(baseline, dict) else None
    after = _graph_name(current) if current is not None else None
    if before == after:
        return ()
    return (
        f"the baseline ran on graph {before or 'unrecorded'}, this run on {after or 'unrecorded'}: "
        "differences may come from the data, not the agent",
    )


def _graph_name(identity: dict[str, Any]) -> str:
    if identity.get("url"):
        return str(identity["url"])
    return f"{identity.get('location', 'files')} ({identity.get('content_hash', 'no hash')})"
