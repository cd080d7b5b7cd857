"""A regeneration compared with the corpus it replaces: which questions survive (same id), which of
those changed references, which are new and which are retired."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.generate.generator import Generation


@dataclass(frozen=True)
class Changes:
    """Question ids by what happened to them, each list in corpus order."""

    unchanged: tuple[str, ...]
    updated: tuple[str, ...]
    new: tuple[str, ...]
    retired: tuple[str, ...]


def compare(previous: Iterable[Question], generation: Generation) -> Changes:
    """How `generation` differs from the previous corpus's questions."""
    before = {question.question_id: question for question in previous}
    unchanged, updated, new = [], [], []
    made = generation.questions()
    for question in made:
        old = before.get(question.question_id)
        if old is None:
            new.append(question.question_id)
        elif old.reference_answer == question.reference_answer and _outputs(
            old.reference_steps or []
        ) == _outputs(question.reference_steps):
            unchanged.append(question.question_id)
        else:
            updated.append(question.question_id)
    kept = {question.question_id for question in made}
    retired = [ident for ident in before if ident not in kept]
    return Changes(tuple(unchanged), tuple(updated), tuple(new), tuple(retired))


def _outputs(steps: list[list[dict[str, Any]]]) -> tuple[object, ...]:
    return tuple(step.get("output") for group in steps for step in group)
