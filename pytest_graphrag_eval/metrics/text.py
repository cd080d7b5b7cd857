"""Deterministic answer metrics on SQuAD-normalized text; each returns the best score over the
references in [0, 1], so it can serve as an eRAG downstream metric."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError, install_extra_hint

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _references(references: str | Sequence[str]) -> list[str]:
    if isinstance(references, str):
        return [references]
    refs = list(references)
    if not refs:
        raise ValueError("no reference answers to compare with")
    for ref in refs:
        if not isinstance(ref, str):
            raise ValueError(f"reference answers must be texts, got {type(ref).__name__}")
    return refs


def exact_match(prediction: str, references: str | Sequence[str]) -> float:
    """1.0 when the normalized prediction equals some normalized reference, else 0.0."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(ref) for ref in _references(references)))


def _f1(predicted_tokens: list[str], reference_tokens: list[str]) -> float:
    if not predicted_tokens or not reference_tokens:
        # Two empty answers agree; an empty one against a non-empty one does not.
        return float(predicted_tokens == reference_tokens)
    common = sum((Counter(predicted_tokens) & Counter(reference_tokens)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted_tokens)
    recall = common / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: str | Sequence[str]) -> float:
    """Harmonic mean of token precision and recall, best over the references."""
    predicted = normalize_answer(prediction).split()
    return max(_f1(predicted, normalize_answer(ref).split()) for ref in _references(references))


def contains_any(prediction: str, references: str | Sequence[str]) -> float:
    """1.0 when a normalized reference occurs in the normalized prediction as whole tokens; references
    that normalize to nothing are ignored, they would match everything."""
    padded = f" {normalize_answer(prediction)} "
    normalized = [normalize_answer(ref) for ref in _references(references)]
    return float(any(ref and f" {ref} " in padded for ref in normalized))


def rouge_l(prediction: str, references: str | Sequence[str]) -> float:
    """ROUGE-L F-measure (rouge-score, with stemming), best over the references."""
    scorer = _rouge_scorer()
    return float(max(scorer.score(ref, prediction)["rougeL"].fmeasure for ref in _references(references)))


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise ConfigurationError(
            f"ROUGE-L needs the rouge-score package: {install_extra_hint('rouge')}"
        ) from None
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
