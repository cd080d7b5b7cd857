"""StepsScorer: the rule-based `steps_score` of one question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.corpus.reference_steps import SPARQL_RESULTS_MEDIA_TYPE, media_type
from pytest_graphrag_eval.corpus.response_records import actual_step_problems
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.scoring import ResultKey, ScoringContext
from pytest_graphrag_eval.steps.groups import mark_matches, score_steps

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question


class StepsScorer:
    """Scores the agent's `actual_steps` against the question's `reference_steps`.

    Returns nothing for a question without reference steps, `steps_score_error`
    when its reference steps are invalid, and otherwise `steps_score` plus the
    copy of `reference_steps` marked with `matches: <actual step id>`. A
    response without actual steps scores 0.
    """

    name = "steps"
    produces: ClassVar[tuple[ResultKey, ...]] = (
        ResultKey("steps_score", "score", missing="the question has no reference_steps", column=0),
        ResultKey("steps_score_error", "error"),
        ResultKey("reference_steps", "data"),
    )

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        if not question.reference_steps:
            return {}
        if question.reference_problems:
            return {"steps_score_error": "invalid reference steps: " + "; ".join(question.reference_problems)}
        actual_steps = response.get("actual_steps") or []
        source = context.response_source
        step_problems = actual_step_problems(actual_steps, source) + sparql_output_problems(
            question.reference_steps, actual_steps, source
        )
        if step_problems:
            return {"steps_score_error": "unscorable agent steps: " + "; ".join(step_problems)}
        outcome = score_steps(
            question.reference_steps, actual_steps, context.steps_scope, question.reference_tables
        )
        return {
            "reference_steps": mark_matches(question.reference_steps, actual_steps, outcome.matches),
            "steps_score": outcome.score,
        }


def sparql_output_problems(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]],
    actual_steps: Any,
    source: SourceLocation | None = None,
) -> list[str]:
    """Actual steps named like a SPARQL reference step whose output is a number, boolean or list.

    No SPARQL result is one of those (results are JSON objects, as text or parsed), so the recording
    wrote something other than the tool's output; saying where beats a silent non-match.
    Unreadable text stays a plain non-match: a tool can answer with an error page or Turtle.
    """
    sparql_names = {
        step.get("name")
        for group in reference_steps
        for step in group
        if media_type(step) == SPARQL_RESULTS_MEDIA_TYPE
    }
    if not sparql_names or not isinstance(actual_steps, list):
        return []
    where = source or SourceLocation()
    problems = []
    for index, step in enumerate(actual_steps):
        if not isinstance(step, Mapping) or step.get("name") not in sparql_names:
            continue
        output = step.get("output")
        if isinstance(output, (bool, int, float, list)):
            shown = "a list" if isinstance(output, list) else f"{type(output).__name__} {output!r}"
            problems.append(
                f"{where.describe(f'actual_steps[{index}].output')}: a {step['name']} output must be "
                f"SPARQL results JSON (text or an object), got {shown}"
            )
    return problems
