"""Recorded responses lined up with the collected corpora before any question is scored; what does not
line up becomes a warning for the terminal summary and the report."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.compare.repeats import replay_warnings
from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.corpus.responses import key_by_corpus
from pytest_graphrag_eval.evaluation import ResponsesCheck, check_responses_match


def replay_attempts(
    responses: Mapping[str, list[ResponseRecord]], corpora: Iterable[Corpus], agent_repeats: int
) -> tuple[dict[str, list[ResponseRecord]], ResponsesCheck]:
    """Each question's recorded attempts, and what did not line up (a `GraphragEvalError` on bad input)."""
    corpora = list(corpora)
    attempts = key_by_corpus(responses, corpora)
    check = check_responses_match((qid for corpus in corpora for qid in corpus.question_ids()), attempts)
    recorded = {question_id: len(attempts_of) for question_id, attempts_of in attempts.items()}
    return attempts, dataclasses.replace(check, extra_warnings=replay_warnings(recorded, agent_repeats))


def numbered_attempts(responses: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What a recording keeps of one question: its response, or every attempt numbered from 1."""
    if len(responses) == 1:
        return {"responses": list(responses)}
    return {"responses": [{**response, "attempt": number} for number, response in enumerate(responses, 1)]}
