"""Scripted judge verdicts for the differential against graphrag-eval's LLM metrics (stdlib only).

The same rules answer graphrag-eval's prompts (when record_judged.py records graphrag-eval's numbers)
and our judges' prompts (in tests/test_judged_metrics_differential.py), so any difference in the
recorded metrics comes from which steps are judged and how verdicts become numbers, not from the judge.

- A retrieved text is useful when it names an equipment id of the reference (T1, L2: a capital
  letter and digits).
- A reference is split into sentences; a sentence is attributed when every upper-case token in it
  (OSLO, T1, ...) occurs in the retrieved texts.
- Answer correctness: each sentence is a claim; a claim of the actual answer matches when it has
  upper-case tokens and all of them occur in the reference answer.
- Answer relevance: the question generated for an answer asks which one it names; an answer saying it
  does not know is noncommittal.
- The custom evaluation `tone`: score 1 for a committed answer, 0 for one saying it does not know.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\b[A-Z0-9]{2,}\b")
_EQUIPMENT = re.compile(r"\b[A-Z][0-9]+\b")


def useful(context: str, reference: str) -> int:
    return int(bool(set(_EQUIPMENT.findall(context)) & set(_EQUIPMENT.findall(reference))))


def attributions(reference: str, contexts: str) -> list[tuple[str, int]]:
    sentences = [sentence.strip() for sentence in reference.split(".") if sentence.strip()]
    return [
        (sentence, int(all(token in contexts for token in _TOKEN.findall(sentence))))
        for sentence in sentences
    ]


def claims(text: str) -> list[str]:
    return [sentence.strip() for sentence in text.split(".") if sentence.strip()]


def claim_counts(reference: str, actual: str) -> dict[str, int]:
    reference_claims, actual_claims = claims(reference), claims(actual)
    tokens = set(_TOKEN.findall(reference))
    matching = sum(
        1 for claim in actual_claims if _TOKEN.findall(claim) and set(_TOKEN.findall(claim)) <= tokens
    )
    return {
        "reference_claims_count": len(reference_claims),
        "actual_claims_count": len(actual_claims),
        "matching_claims_count": min(matching, len(reference_claims), len(actual_claims)),
    }


def generated_question(answer: str) -> dict[str, object]:
    return {
        "question": f"Which one is {answer.strip().rstrip('.')}?",
        "noncommittal": int("not know" in answer),
    }


def tone(answer: str) -> tuple[int, str]:
    return (0, "evasive") if "not know" in answer else (1, "committed")
