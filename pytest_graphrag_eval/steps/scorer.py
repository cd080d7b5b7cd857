"""StepsScorer: the rule-based `steps_score` of one question."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.corpus.responses import actual_step_problems
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
        if step_problems := actual_step_problems(actual_steps):
            return {"steps_score_error": "unscorable agent steps: " + "; ".join(step_problems)}
        outcome = score_steps(
            question.reference_steps, actual_steps, context.steps_scope, question.reference_tables
        )
        return {
            "reference_steps": mark_matches(question.reference_steps, actual_steps, outcome.matches),
            "steps_score": outcome.score,
        }
