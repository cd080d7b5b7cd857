"""StepsScorer: the rule-based `steps_score` of one question, and partial credit on its results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.corpus.reference_steps import SPARQL_RESULTS_MEDIA_TYPE, media_type
from pytest_graphrag_eval.corpus.response_records import STEP_STATUSES, actual_step_problems
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser
from pytest_graphrag_eval.scoring import ResultKey, ScoringContext
from pytest_graphrag_eval.steps import STEPS_KEYS
from pytest_graphrag_eval.steps.groups import mark_matches, score_steps
from pytest_graphrag_eval.steps.result_credit import result_credit

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question


class StepsScorer:
    """Scores the agent's `actual_steps` against the question's `reference_steps`: `steps_score`, the
    marked reference steps, partial credit, or `steps_score_error` for invalid references."""

    name = "steps"
    produces: ClassVar[tuple[ResultKey, ...]] = STEPS_KEYS

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        if not question.reference_steps:
            return {}
        references = question.reading_for_scoring()  # read once per scoring, from the corpus's memo
        if references.problems:
            return {"steps_score_error": "invalid reference steps: " + "; ".join(references.problems)}
        actual_steps = response.get("actual_steps") or []
        source = context.response_source
        if not plainly_scorable(actual_steps):
            step_problems = actual_step_problems(actual_steps, source) + sparql_output_problems(
                question.reference_steps, actual_steps, source
            )
            if step_problems:
                return {"steps_score_error": "unscorable agent steps: " + "; ".join(step_problems)}
        parse = MemoizedParser(references.tables, references.readings)
        outcome = score_steps(question.reference_steps, actual_steps, context.steps_scope, parse=parse)
        # The credit reuses the outputs parsed and comparisons made above, and needs none of them
        # when every result step matched.
        credit = result_credit(
            question.reference_steps, actual_steps, context.steps_scope, parse, outcome.matches
        )
        if context.row_counts is not None:
            context.row_counts.note(
                (
                    step.get("output")
                    for step in actual_steps
                    if type(step) is dict or isinstance(step, Mapping)
                ),
                parse,
            )
        result: dict[str, Any] = {
            "reference_steps": mark_matches(question.reference_steps, actual_steps, outcome.matches),
            "steps_score": outcome.score,
        }
        if credit is not None:
            result["steps_result_precision"] = credit.precision
            result["steps_result_recall"] = credit.recall
            result["steps_result_f1"] = credit.f1
            if credit.unreadable:
                where = f"question {question.question_id!r} (template {question.template_id!r})"
                result["steps_output_error"] = f"{where}: " + "; ".join(credit.unreadable)
        return result


_PLAIN_OUTPUTS = (str, dict, type(None))


def plainly_scorable(actual_steps: Sequence[object]) -> bool:
    """True when `actual_step_problems` and `sparql_output_problems` can find nothing (most
    recordings); False only says those checks must look."""
    for step in actual_steps:
        if (
            type(step) is not dict
            or step.get("status") not in STEP_STATUSES
            or type(step.get("output")) not in _PLAIN_OUTPUTS
        ):
            return False
    return True


def sparql_output_problems(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]],
    actual_steps: Any,
    source: SourceLocation | None = None,
) -> list[str]:
    """Actual steps named like a SPARQL reference step whose output is a number, boolean or list: the
    recording wrote something other than a SPARQL result, and saying where beats a silent non-match."""
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
