"""The `lexical` claims judge: correctness without an LLM, for offline CI gates.

Claims are list items and sentences; two match when one's normalized words occur in the other. The
count is a maximum one-to-one matching, so recall and precision keep the LLM judge's meaning.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_graphrag_eval.answers.claims import ClaimCounts
from pytest_graphrag_eval.answers.metric import AnswerInputs, MetricOutcome, blank_input_error
from pytest_graphrag_eval.metrics.text import normalize_answer

LABEL = "lexical"
_MARKDOWN = re.compile(r"\*\*|__|`|^#+\s*")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\(?\d+[.)]|\(?[a-zA-Z][.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ITEM_SEPARATOR = re.compile(r"\s*;\s*|,(?!\d)\s*")
_LAST_AND = re.compile(r"^and\s+|\s+and\s+")
_MAX_ITEM_WORDS = 4
_SHOWN_MISSING = 5


def split_claims(text: str) -> list[str]:
    """The claims of `text`, in order, as they are written (markdown emphasis removed)."""
    lines = [_MARKDOWN.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    claims: list[str] = []
    for index, line in enumerate(lines):
        item = _LIST_MARKER.sub("", line, count=1)
        if item != line:
            claims.append(item.strip())
            continue
        next_is_item = index + 1 < len(lines) and _LIST_MARKER.match(lines[index + 1]) is not None
        if line.endswith(":") and next_is_item:
            continue
        for sentence in _SENTENCE_END.split(line):
            claims.extend(_enumeration_items(sentence))
    return [claim for claim in claims if normalize_answer(claim)]


def _enumeration_items(sentence: str) -> list[str]:
    """A sentence that only enumerates short items ("Connected: A, B and C."), split into them."""
    _, colon, rest = sentence.partition(":")
    body = rest if colon and rest.strip() else sentence
    items = _ITEM_SEPARATOR.split(body.strip().rstrip("."))
    if len(items) >= 2:
        items[-1:] = _LAST_AND.split(items[-1])
    items = [item.strip(" .") for item in items if item.strip(" .")]
    if len(items) >= 2 and all(len(item.split()) <= _MAX_ITEM_WORDS for item in items):
        return items
    return [sentence]


def claims_match(first: str, second: str) -> bool:
    """True when one normalized claim occurs in the other as whole words."""
    a, b = normalize_answer(first), normalize_answer(second)
    return bool(a and b) and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def matching_pairs(reference: list[str], actual: list[str]) -> list[tuple[int, int]]:
    """A maximum one-to-one matching of claims (augmenting paths), as (reference, actual) pairs."""
    partner_of_actual: dict[int, int] = {}

    def assign(ref: int, visited: set[int]) -> bool:
        for act, claim in enumerate(actual):
            if act in visited or not claims_match(reference[ref], claim):
                continue
            visited.add(act)
            if act not in partner_of_actual or assign(partner_of_actual[act], visited):
                partner_of_actual[act] = ref
                return True
        return False

    for ref in range(len(reference)):
        assign(ref, set())
    return sorted((ref, act) for act, ref in partner_of_actual.items())


def expand_claims(actual: list[str], reference: list[str]) -> list[str]:
    """Each answer claim once per reference claim it contains (at least once), to keep matching one-to-one."""
    expanded: list[str] = []
    for claim in actual:
        normalized = f" {normalize_answer(claim)} "
        contained = sum(
            1 for ref in reference if normalize_answer(ref) and f" {normalize_answer(ref)} " in normalized
        )
        expanded.extend([claim] * max(1, contained))
    return expanded


def lexical_counts(reference: str, actual: str) -> ClaimCounts | None:
    """Claim counts of one reference alternative; None when either text has no claims."""
    reference_claims = split_claims(reference)
    actual_claims = expand_claims(split_claims(actual), reference_claims)
    if not reference_claims or not actual_claims:
        return None
    pairs = matching_pairs(reference_claims, actual_claims)
    matched = {ref for ref, _ in pairs}
    missing = [claim for index, claim in enumerate(reference_claims) if index not in matched]
    reason = (
        f"{len(pairs)} of {len(reference_claims)} reference claims found among "
        f"{len(actual_claims)} answer claims"
    )
    if missing:
        shown = "; ".join(repr(claim) for claim in missing[:_SHOWN_MISSING])
        more = f" and {len(missing) - _SHOWN_MISSING} more" if len(missing) > _SHOWN_MISSING else ""
        reason += f"; missing: {shown}{more}"
    return ClaimCounts(len(reference_claims), len(actual_claims), len(pairs), reason)


class LexicalCorrectness:
    """Claims-based correctness by normalized containment (`answer_judge` = `lexical`)."""

    error_key = "answer_eval_error"
    spread_keys: tuple[str, ...] = ()
    cost_key = None
    uses_llm = False

    def applies(self, inputs: AnswerInputs) -> bool:
        return inputs.reference_answer is not None and inputs.actual_answer is not None

    async def evaluate(self, inputs: AnswerInputs, repeat: int) -> MetricOutcome:
        keys: dict[str, Any] = {"answer_judge": LABEL}
        problem = blank_input_error(inputs, reference=True)
        assert inputs.actual_answer is not None
        if problem is None:
            scored = [lexical_counts(reference, inputs.actual_answer) for reference in inputs.references()]
            candidates = [counts for counts in scored if counts is not None]
            if candidates:
                keys.update(max(candidates, key=lambda counts: counts.f1).as_keys())
                return MetricOutcome(keys)
            problem = "the lexical judge found no claims to compare (only punctuation or articles)"
        keys[self.error_key] = problem
        return MetricOutcome(keys)
