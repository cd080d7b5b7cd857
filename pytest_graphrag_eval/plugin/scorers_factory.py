"""The scorers a plugin run uses, from its resolved answer settings and its one judge client.

Settings are resolved once in `PluginSettings` and the judge client is made once
per process by the session; here they become the scorer list: deterministic
scorers always, answer scorers by the answer settings (eRAG reads each corpus's
scoring context).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.evaluation import default_scorers
from pytest_graphrag_eval.scoring import Scorer

if TYPE_CHECKING:
    from pytest_graphrag_eval.answers import AnswerSettings
    from pytest_graphrag_eval.llm import JudgeClient


def build_scorers(
    answers: AnswerSettings, judge: JudgeClient | None
) -> tuple[list[Scorer], Callable[[], Coroutine[Any, Any, None]] | None]:
    """Scorers and an async close callback for the judge client (None without one).

    Answer modules are imported here, not at module level, so the plugin loads
    quickly in runs that configure no judge.
    """
    from pytest_graphrag_eval.answers import build_answer_scorers

    scorers = [*default_scorers(), *build_answer_scorers(answers, judge)]
    return scorers, (judge.aclose if judge is not None else None)
