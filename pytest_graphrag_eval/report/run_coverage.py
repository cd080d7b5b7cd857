"""How much of the corpus a run judged (`metadata.partial`), so a run cut by `-x`, `-k`, a shard or
Ctrl-C never passes for a whole one. Pure values: the plugin counts, this module words it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from pytest_graphrag_eval.formats.json_types import JsonObject

PARTIAL_KEY = "partial"
MAX_LISTED = 10


@dataclass(frozen=True)
class RunCoverage:
    """The corpus's questions, those the run selected, those with a result, and those that never ran."""

    corpus_questions: int
    selected_questions: int
    judged_questions: int  # questions in the results: scored, or cut as an agent error
    not_run: tuple[str, ...] = ()  # selected questions whose items never ran (their ids)
    stopped: str | None = None  # why pytest stopped before the last item (-x, --maxfail, Ctrl-C)

    @property
    def partial(self) -> bool:
        return self.judged_questions < self.corpus_questions or bool(self.not_run)

    @property
    def interrupted(self) -> bool:
        """The run stopped early with selected questions left: every report says it was interrupted."""
        return self.stopped is not None and bool(self.not_run)

    def to_json(self) -> JsonObject:
        return {**asdict(self), "not_run": list(self.not_run)}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object]) -> RunCoverage | None:
        """The coverage a report's metadata records (None for a whole run, or a malformed record)."""
        record = metadata.get(PARTIAL_KEY)
        if not isinstance(record, Mapping):
            return None
        names = ("corpus_questions", "selected_questions", "judged_questions")
        counts = [count for name in names if isinstance(count := record.get(name), int)]
        not_run, stopped = record.get("not_run"), record.get("stopped")
        if len(counts) < len(names) or not isinstance(not_run, list):
            return None
        corpus, selected, judged = counts
        return cls(
            corpus, selected, judged, tuple(map(str, not_run)), None if stopped is None else str(stopped)
        )

    def gates_note(self) -> str:
        """What a gate judged on part of the corpus says next to its verdict."""
        return f"on {self.judged_questions} of {self.corpus_questions} questions"

    def lines(self, *, gated: bool, gates_deferred: bool) -> list[str]:
        """The summary's sentences: how many of how many were judged, what never ran, what the gates saw."""
        head = (
            f"partial run: {self.judged_questions} of {self.corpus_questions} corpus questions judged"
            f" ({self.selected_questions} selected)"
        )
        lines = [head]
        if self.not_run:
            why = f" ({self.stopped})" if self.stopped else ""
            lines.append(f"{len(self.not_run)} selected question(s) never ran{why}: {listed(self.not_run)}")
        if gated and not gates_deferred:  # a shard's own line says where its gates are decided
            lines.append(
                f"the gates were decided on the {self.judged_questions} question(s) judged, "
                "not on the whole corpus"
            )
        return lines


def listed(ids: Sequence[str], most: int = MAX_LISTED) -> str:
    """The first ids and how many more: a line a CI log can hold."""
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")
