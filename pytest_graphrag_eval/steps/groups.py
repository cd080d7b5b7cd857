"""Matching reference step groups to the actual steps, and the steps score (`steps_scope` rules:
docs/steps.md); among equally good assignments later actual steps win, as the agent answered from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pytest_graphrag_eval.formats.json_copy import copy_json_like
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser, ResultsParser
from pytest_graphrag_eval.steps import SCOPES
from pytest_graphrag_eval.steps.assignment import max_weight_assignment

_SCORE_RESOLUTION = 10**9  # scores are compared to 1e-9 so the assignment works on exact integers


class StepMatch(NamedTuple):
    """Reference step `reference_index` of group `group_index` matched actual step `actual_index`."""

    group_index: int
    reference_index: int
    actual_index: int
    score: float


class StepsOutcome(NamedTuple):
    score: float
    matches: tuple[StepMatch, ...]


def score_steps(
    reference_steps: Sequence[Sequence[Mapping[str, object]]],
    actual_steps: Sequence[Mapping[str, object]],
    scope: str = "last_group",
    *,
    parse: MemoizedParser | None = None,
) -> StepsOutcome:
    """Match the reference groups to the actual steps and compute the steps score, reusing the
    outputs `parse` has read when given."""
    if scope not in SCOPES:
        raise ValueError(f"steps scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    if not reference_steps:
        raise ValueError("there are no reference step groups to score")
    steps = [step if type(step) is dict or isinstance(step, Mapping) else {} for step in actual_steps]
    parse = parse or MemoizedParser()
    last = len(reference_steps) - 1
    if scope == "last_group":
        matches = match_group(reference_steps[last], last, steps, len(steps), parse)
        return StepsOutcome(_group_score(matches, reference_steps[last]), tuple(matches))
    found: list[StepMatch] = []
    total = 0.0
    before = len(steps)
    for group_index in range(last, -1, -1):
        group = reference_steps[group_index]
        matches = match_group(group, group_index, steps, before, parse)
        found.extend(matches)
        total += _group_score(matches, group)
        if len(matches) < len(group):
            break
        before = min(match.actual_index for match in matches)
    return StepsOutcome(total / len(reference_steps), tuple(found))


def match_group(
    group: Sequence[Mapping[str, object]],
    group_index: int,
    actual_steps: Sequence[Mapping[str, object]],
    before: int,
    parse: ResultsParser | None = None,
) -> list[StepMatch]:
    """The best one-to-one matching of a group's steps among `actual_steps[:before]`."""
    from pytest_graphrag_eval.steps.match import step_match_score  # the comparers: not for `SCOPES` alone

    parse = parse or MemoizedParser()
    scores = [
        [step_match_score(reference, actual_steps[index], parse) for index in range(before)]
        for reference in group
    ]
    # Exact integer weights: the score first, then a preference for later actual steps.
    spread = len(group) * (before + 1) + 1
    weights = [
        [
            round(score * _SCORE_RESOLUTION) * spread + index + 1 if score > 0 else 0
            for index, score in enumerate(row)
        ]
        for row in scores
    ]
    assignment = max_weight_assignment(weights)
    return [
        StepMatch(group_index, reference_index, actual_index, scores[reference_index][actual_index])
        for reference_index, actual_index in sorted(assignment.items())
    ]


def mark_matches(
    reference_steps: Sequence[Sequence[Mapping[str, object]]],
    actual_steps: Sequence[Mapping[str, object]],
    matches: Sequence[StepMatch],
) -> list[list[dict[str, Any]]]:
    """A deep copy of the reference groups with `matches: <actual step id>` on matched steps (stale
    `matches` dropped)."""
    marked = [[_without_matches(step) for step in group] for group in reference_steps]
    for match in matches:
        actual = actual_steps[match.actual_index]
        step_id = actual.get("id") if isinstance(actual, Mapping) else None
        marked[match.group_index][match.reference_index]["matches"] = (
            step_id if step_id is not None else f"actual_steps[{match.actual_index}]"
        )
    return marked


def _without_matches(step: Mapping[str, object]) -> dict[str, Any]:
    if type(step) is dict:  # copied in one call (its text values shared), then the stale key dropped
        copied: dict[str, Any] = copy_json_like(step)
        copied.pop("matches", None)
        return copied
    return {key: copy_json_like(value) for key, value in step.items() if key != "matches"}


def _group_score(matches: Sequence[StepMatch], group: Sequence[Mapping[str, object]]) -> float:
    return sum(match.score for match in matches) / len(group)
