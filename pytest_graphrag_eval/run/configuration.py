"""The run's resolved settings as plain values, read by the run without pytest; the plugin's
`PluginSettings` parses and checks them (`plugin/settings.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.report.shown_path import shown_path
from pytest_graphrag_eval.run.run_identity import file_sha256

if TYPE_CHECKING:  # types only: a merge, which reads none of these settings, loads no judge
    from pytest_graphrag_eval.answers.settings import AnswerSettings
    from pytest_graphrag_eval.corpus.shards import ShardSpec
    from pytest_graphrag_eval.gates.model import Gate
    from pytest_graphrag_eval.gates.thresholds import Threshold
    from pytest_graphrag_eval.llm.settings import LLMSettings


@dataclass(frozen=True)
class RunConfiguration:
    """Everything the run was configured with, resolved (the plugin's `PluginSettings` checks it); each
    option's default is its declaration's (`options/declarations.py`)."""

    corpus_paths: tuple[Path, ...]
    corpus_from_cli: bool
    responses_path: Path | None
    responses_format: str
    trace_question_attribute: str
    tool_names: Mapping[str, str]  # ini, then command line, per tool
    record_path: Path | None
    report_path: Path | None
    baseline: Path | str | None  # a report file, or the REF of history:REF (a run of the history)
    confidence: float
    resamples: int
    markdown_path: Path | None
    html_path: Path | None
    judge_labels_path: Path | None
    reviews_path: Path | None
    review_queue_path: Path | None
    thresholds: Mapping[str, Threshold]  # ini, then command line, per metric
    gates: tuple[Gate, ...]  # ini, then command line
    steps_scope: str
    agent_concurrency: int
    agent_timeout: float | None
    agent_repeats: int
    repeat_policy: str
    answers_config: Path | None
    clear_cache: bool
    sparql_endpoint: str | None
    sparql_timeout: float
    sparql_concurrency: int
    sparql_base_iri: str | None
    sparql_service: str | None
    check_references: bool
    update_references: bool
    graph_coverage: bool
    execute: str | None
    shard: ShardSpec | None
    history_url: str | None  # a path made absolute, or a URL as given
    history_required: bool
    history_run_key: str | None
    flaky_runs: int
    flaky_flips: int
    answers: AnswerSettings
    llm: LLMSettings  # the whole run's (its budget too)
    workers: int  # processes sharing the judge budget (xdist workers)
    llm_only_given: tuple[str, ...]  # flags of LLM-only settings the user gave (plugin/settings.py)
    shown_from: tuple[Path, ...]  # the rootdir and the invocation folder: outputs name files from them

    @property
    def baseline_path(self) -> Path | None:
        return self.baseline if isinstance(self.baseline, Path) else None

    @property
    def baseline_history(self) -> str | None:
        """`--graphrag-baseline history:REF`: the REF."""
        return self.baseline if isinstance(self.baseline, str) else None

    @property
    def client_llm(self) -> LLMSettings:
        """This process's judge-client settings: its share of the run's budget."""
        from pytest_graphrag_eval.llm.settings import budget_share

        return budget_share(self.llm, self.workers)

    @property
    def execute_reference(self) -> bool:
        return self.execute in ("reference", "both")

    @property
    def execute_agent(self) -> bool:
        return self.execute in ("agent", "both")

    @property
    def references_only_allowed(self) -> bool:
        """With references checked or updated, a run needs no agent answers: the references are the work."""
        return self.sparql_endpoint is not None and (self.check_references or self.update_references)

    @property
    def uses_graph(self) -> bool:
        return self.sparql_endpoint is not None and bool(
            self.check_references or self.update_references or self.execute
        )

    def shown(self, path: Path) -> str:
        """How outputs name a local file: from the rootdir or the current folder, never the checkout."""
        return shown_path(path, *self.shown_from)

    def report_metadata(self) -> JsonObject:
        """What the run was configured with, as the JSON report's metadata records it."""
        judge = self.answers.judge if self.answers.judge != "none" else None
        return {
            "corpus": [self.shown(path) for path in self.corpus_paths],
            "responses": self.shown(self.responses_path) if self.responses_path else "live",
            "steps_scope": self.steps_scope,
            "judge": judge,
            "judge_model": self.llm.model if judge == "llm" else None,
        }

    def settings_record(self, gates: Sequence[Gate]) -> JsonObject:
        """The settings that change results, verdicts, gates or the comparison (shards must share them)."""
        baseline = self.baseline_path
        # `path` is where a merge reads the baseline again; `name` is how its reports show it
        file = (
            {"name": self.shown(baseline), "path": str(baseline), "sha256": _file_identity(baseline)}
            if baseline
            else None
        )
        return {
            "thresholds": [[rule.expression, rule.source] for rule in self.thresholds.values()],
            "gates": [[gate.expression, gate.source] for gate in gates],
            "confidence": self.confidence,
            "resamples": self.resamples,
            "baseline": file or ({"history": self.baseline_history} if self.baseline_history else None),
            "responses": _file_identity(self.responses_path),  # by content: shards compare it
            "embedding_model": self.llm.embedding_model if self.answers.relevance else None,
            "relevance": self.answers.relevance,
            "judge_repeats": self.answers.repeats,
            "agent_repeats": self.agent_repeats,
            "repeat_policy": self.repeat_policy,
            "correctness_prompt": _file_identity(self.answers.correctness_prompt_file),
            "answers_config": _file_identity(self.answers_config),
        }


def _file_identity(path: Path | None) -> str | None:
    """A file the run read, by content (shards may hold it at different paths); None if it is gone."""
    return file_sha256(path) if path is not None and path.is_file() else None
