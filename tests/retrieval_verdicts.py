"""Scripted judge verdicts for the retrieval-judge differential (stdlib only).

The same rules answer graphrag-eval's RAGAS prompts (when record_retrieval.py records graphrag-eval's
numbers) and our judges' prompts (in tests/test_retrieval_judges_differential.py), so any difference in
the recorded metrics comes from which steps are judged and how verdicts become numbers, not from the judge.

- A retrieved text is useful when it names an equipment id of the reference (T1, L2: a capital
  letter and digits).
- A reference is split into sentences; a sentence is attributed when every upper-case token in it
  (OSLO, T1, ...) occurs in the retrieved texts.
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
