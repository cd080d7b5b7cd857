"""The question items a run selected (after every deselection) and those that reported: the rest
never ran, because `-x`, `--maxfail` or Ctrl-C stopped the run first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_graphrag_eval.report.run_coverage import RunCoverage


class QuestionsInRun:
    """Node ids of the question items selected, in collection order, and of those that reported."""

    def __init__(self) -> None:
        self.selected: dict[str, None] = {}  # ordered, each once (every xdist worker sends them all)
        self.reported: set[str] = set()

    def select(self, nodeids: Iterable[str]) -> None:
        self.selected.update(dict.fromkeys(nodeids))

    def coverage(
        self, *, corpus_questions: int, results: Sequence[Mapping[str, object]], stopped: str | None
    ) -> RunCoverage:
        """How much of the corpus the run judged; `stopped` is why pytest stopped early, if it did."""
        in_results = {str(result.get("nodeid")) for result in results}
        not_run = [
            question_id(nodeid)
            for nodeid in self.selected
            if nodeid not in self.reported and nodeid not in in_results
        ]
        return RunCoverage(
            corpus_questions=max(corpus_questions, len(results)),
            selected_questions=len(self.selected),
            judged_questions=len(results),
            not_run=tuple(not_run),
            stopped=stopped if not_run else None,
        )


def question_id(nodeid: str) -> str:
    """The question id a question item's node id ends with (`corpus.yaml::template::question`)."""
    return nodeid.rsplit("::", 1)[-1]
