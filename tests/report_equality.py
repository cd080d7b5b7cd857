"""Field-by-field comparison of two JSON reports, timings aside, for tests that need two runs to agree.

Every key of either report is compared (unlike the snapshot test, which allows new keys):
a merged report must be the report one run writes, not a superset of it.
"""

from __future__ import annotations

import re
from typing import Any

# Wall-clock values and the interpreter that wrote the report: the only fields two equal runs may differ in.
VOLATILE = frozenset({"started_at", "duration_sec", "elapsed_sec", "python"})
# The same in the Markdown summary and the HTML report.
# Markdown escapes punctuation (`2026\\-01\\-01T00\\:00\\:00Z`, `2\\.5`), hence the optional backslashes.
_TIMING_TEXT = re.compile(
    r"\d{4}\\?-\d\d\\?-\d\dT\d\d\\?:\d\d\\?:\d\dZ"
    r"|(?<=duration \(s\) )[\d\\.]+"
    r"|\b\d+(?:\\?\.\d+)? ?(?:s|sec|seconds)\b"
)


def report_differences(expected: Any, actual: Any, where: str = "report") -> list[str]:
    """Where `actual` differs from `expected`: missing, extra or changed fields, timings aside."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        problems = []
        for key in [*expected, *(key for key in actual if key not in expected)]:
            if key in VOLATILE:
                continue
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            elif key not in expected:
                problems.append(f"{where}.{key}: unexpected {actual[key]!r:.80}")
            else:
                problems += report_differences(expected[key], actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} items became {len(actual)}"]
        return [
            problem
            for index, (one, other) in enumerate(zip(expected, actual, strict=True))
            for problem in report_differences(one, other, f"{where}[{index}]")
        ]
    if expected != actual or type(expected) is not type(actual):
        return [f"{where}: {expected!r:.80} became {actual!r:.80}"]
    return []


def without_timings(text: str) -> str:
    """A Markdown or HTML report with its timestamps and durations blanked out."""
    return _TIMING_TEXT.sub("<time>", text)
