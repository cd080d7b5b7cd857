"""content_hash(): a fingerprint of what a question asks, to tell an edited question from a changed
agent; the run's `matches` annotations are dropped first."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

HASHED_FIELDS = ("question_text", "reference_answer", "reference_steps")
_RUN_ANNOTATIONS = frozenset({"matches"})


def content_hash(result: Mapping[str, Any]) -> str:
    """`sha256:<hex>` over the canonical JSON (sorted keys, no whitespace) of the hashed fields."""
    content = {field: result.get(field) for field in HASHED_FIELDS}
    content["reference_steps"] = _without_annotations(content["reference_steps"])
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _without_annotations(reference_steps: Any) -> Any:
    if not isinstance(reference_steps, list):
        return reference_steps
    return [
        [_strip_step(step) for step in group] if isinstance(group, list) else group
        for group in reference_steps
    ]


def _strip_step(step: Any) -> Any:
    if not isinstance(step, Mapping):
        return step
    return {key: value for key, value in step.items() if key not in _RUN_ANNOTATIONS}
