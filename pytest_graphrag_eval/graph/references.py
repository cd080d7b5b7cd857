"""Reference steps against the live graph: execute their queries, tell stale outputs from fresh ones,
and re-execute an agent's recorded queries. A stored output is compared with the fresh result by the
rule scoring uses, so a reference is stale exactly when a perfect agent would now fail it.
"""

from __future__ import annotations

import concurrent.futures
import copy
import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Question, read_reference_steps
from pytest_graphrag_eval.corpus.reference_steps import (
    SPARQL_RESULTS_MEDIA_TYPE,
    reference_step_problem,
    step_path,
)
from pytest_graphrag_eval.graph.endpoint import EndpointError, EndpointUnavailable, SparqlEndpoint
from pytest_graphrag_eval.graph.readonly import import_pyoxigraph
from pytest_graphrag_eval.steps.match import step_match_score
from pytest_graphrag_eval.steps.sparql_explain import FRESH_RESULT, explain_sparql_mismatch

SPARQL_STEP = "sparql_query"
SHOWN_ROWS = 5
FRESH, STALE, MISSING, FAILED = "fresh", "stale", "missing", "error"


@dataclass(frozen=True)
class StepCheck:
    """One executed reference step: where it is, what its query gave, and how that compares."""

    group: int
    index: int
    status: str  # fresh | stale | missing (no stored output) | error (the query failed)
    output: str | None = None  # the fresh result, when the query ran
    media_type: str | None = None
    changes: dict[str, object] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    @property
    def where(self) -> str:
        return step_path(self.group, self.index)

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"step": self.where, "status": self.status}
        if self.error is not None:
            entry["error"] = self.error
        if self.changes:
            entry["changes"] = self.changes
        if self.status in (STALE, MISSING):
            entry["output"] = self.output
            entry["output_media_type"] = self.media_type
        return entry


@dataclass(frozen=True)
class QuestionReferences:
    question_id: str
    template_id: str
    file: str | None
    steps: tuple[StepCheck, ...]

    @property
    def stale(self) -> bool:
        return any(step.status in (STALE, MISSING) for step in self.steps)

    @property
    def errors(self) -> list[str]:
        return [f"{step.where}: {step.error}" for step in self.steps if step.status == FAILED]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "template_id": self.template_id,
            "file": self.file,
            "stale": self.stale,
            "steps": [step.to_dict() for step in self.steps],
        }


def executable_steps(question: Question) -> list[tuple[int, int, dict[str, Any]]]:
    """(group, index, step) for every reference step that is a SPARQL query step."""
    return [
        (group_index, step_index, step)
        for group_index, group in enumerate(question.reference_steps or [])
        for step_index, step in enumerate(group)
        if step.get("name") == SPARQL_STEP or step.get("output_media_type") == SPARQL_RESULTS_MEDIA_TYPE
    ]


def step_query(step: Mapping[str, object]) -> str | None:
    args = step.get("args")
    query = args.get("query") if isinstance(args, Mapping) else None
    return query if isinstance(query, str) and query.strip() else None


def check_question(
    question: Question, endpoint: SparqlEndpoint, *, require_queries: bool = False
) -> QuestionReferences:
    """Execute and compare every reference query step of `question` (with `require_queries`, one
    without a query is an error). An unreachable endpoint is raised: the run's problem, not the question's."""
    checks = []
    for group, index, step in executable_steps(question):
        query = step_query(step)
        if query is not None:
            checks.append(_check_step(group, index, step, query, endpoint))
        elif require_queries:
            error = "has no 'args.query' to compute the reference output from"
            checks.append(StepCheck(group, index, FAILED, error=error))
    return QuestionReferences(
        question.question_id, question.template_id, question.location.file, tuple(checks)
    )


def _check_step(
    group: int, index: int, step: Mapping[str, object], query: str, endpoint: SparqlEndpoint
) -> StepCheck:
    try:
        result = endpoint.execute(query)
    except EndpointUnavailable:
        raise
    except EndpointError as error:
        return StepCheck(group, index, FAILED, error=f"the reference query failed: {error}")
    stored_media = step.get("output_media_type")
    media = stored_media if isinstance(stored_media, str) else result.media_type

    def checked(status: str, changes: dict[str, object] | None = None) -> StepCheck:
        return StepCheck(group, index, status, result.text, media, changes or {}, seconds=result.seconds)

    if step.get("output") is None:
        return checked(MISSING)
    if reference_step_problem(step) is not None:
        return checked(STALE, {"stored_output": "invalid"})
    actual = {"name": step.get("name"), "status": "success", "output": result.text}
    if step_match_score(step, actual) >= 1.0:
        return checked(FRESH)
    return checked(STALE, describe_changes(step, result.text, media))


def describe_changes(step: Mapping[str, object], fresh: str, media: str) -> dict[str, object]:
    """What differs between the stored and the fresh output, as rows or triples added and removed."""
    if media == SPARQL_RESULTS_MEDIA_TYPE:
        explained = explain_sparql_mismatch(step, fresh, limit=SHOWN_ROWS, sides=FRESH_RESULT)
        if "reference_boolean" in explained:
            return {
                "ask_flipped": {
                    "stored": explained["reference_boolean"],
                    "fresh": explained["actual_boolean"],
                }
            }
        return {
            "rows_added": explained.get("extra_rows", []),
            "rows_added_total": explained.get("extra_rows_total", 0),
            "rows_removed": explained.get("missing_rows", []),
            "rows_removed_total": explained.get("missing_rows_total", 0),
            "reason": explained.get("reason"),
        }
    stored = _triples(step.get("output"))
    if stored is None:
        return {"reason": "the stored output differs from the fresh one (and is not N-Triples)"}
    current = set(fresh.splitlines())
    added, removed = sorted(current - stored), sorted(stored - current)
    return {
        "triples_added": added[:SHOWN_ROWS],
        "triples_added_total": len(added),
        "triples_removed": removed[:SHOWN_ROWS],
        "triples_removed_total": len(removed),
    }


def _triples(text: object) -> set[str] | None:
    """A stored graph output as canonical N-Triples lines, or None when it is not N-Triples/Turtle."""
    if not isinstance(text, str):
        return None
    from pytest_graphrag_eval.graph.rdf_text import canonical_ntriples

    pyoxigraph = import_pyoxigraph()
    for rdf_format in (pyoxigraph.RdfFormat.N_TRIPLES, pyoxigraph.RdfFormat.TURTLE):
        try:
            return set(
                canonical_ntriples(pyoxigraph.parse(text.encode("utf-8"), format=rdf_format)).splitlines()
            )
        except (SyntaxError, ValueError):
            continue
    return None


def check_questions(
    questions: Iterable[Question],
    endpoint: SparqlEndpoint,
    *,
    concurrency: int,
    require_queries: bool = False,
) -> dict[str, QuestionReferences | EndpointUnavailable]:
    """Check many questions with `concurrency` queries in flight; an unavailable endpoint is a value."""

    def one(question: Question) -> QuestionReferences | EndpointUnavailable:
        try:
            return check_question(question, endpoint, require_queries=require_queries)
        except EndpointUnavailable as error:
            return error

    listed = list(questions)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return dict(zip((q.question_id for q in listed), pool.map(one, listed), strict=True))


def with_fresh_references(question: Question, check: QuestionReferences) -> Question:
    """The question with fresh outputs in place of stored ones; a failed query is a reference problem,
    so the steps score becomes an error, never a pass."""
    steps = copy.deepcopy(question.reference_steps or [])
    for step_check in check.steps:
        if step_check.output is not None:
            step = steps[step_check.group][step_check.index]
            step["output"] = step_check.output
            step.setdefault("output_media_type", step_check.media_type)
    reading = read_reference_steps(steps)
    problems = (*reading.problems, *check.errors)
    return dataclasses.replace(
        question, reference_steps=steps, references_read=dataclasses.replace(reading, problems=problems)
    )


def with_failed_references(question: Question, check: QuestionReferences) -> Question:
    """The question with its failed reference queries added to its reference problems (checks only)."""
    if not check.errors:
        return question
    reading = question.reference_reading
    problems = (*reading.problems, *check.errors)
    return dataclasses.replace(question, references_read=dataclasses.replace(reading, problems=problems))


def reexecute_agent_steps(
    response: Mapping[str, object], endpoint: SparqlEndpoint
) -> tuple[dict[str, object], dict[str, int]]:
    """The response with each `sparql_query` step's output replaced by its result on this graph (a
    failed query: an error step, as if the agent had run it here), and a summary."""
    steps = response.get("actual_steps")
    if not isinstance(steps, list):
        return dict(response), {"reexecuted": 0, "failed": 0}
    fresh_steps: list[object] = []
    executed = failed = 0
    for step in steps:
        query = step_query(step) if isinstance(step, Mapping) else None
        if not isinstance(step, Mapping) or step.get("name") != SPARQL_STEP or query is None:
            fresh_steps.append(step)
            continue
        executed += 1
        try:
            result = endpoint.execute(query)
        except EndpointUnavailable:
            raise
        except EndpointError as error:
            failed += 1
            fresh_steps.append({**step, "status": "error", "output": None, "error": str(error)})
            continue
        fresh_steps.append({**step, "status": "success", "output": result.text})
    return {**response, "actual_steps": fresh_steps}, {"reexecuted": executed, "failed": failed}
