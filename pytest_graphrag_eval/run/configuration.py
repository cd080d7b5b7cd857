"""The run's resolved settings as plain values, read by the run without pytest; the plugin's
`PluginSettings` parses and checks them (`plugin/settings.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.answers.settings import AnswerSettings
from pytest_graphrag_eval.compare.comparison import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from pytest_graphrag_eval.compare.past_runs import DEFAULT_FLAKY_FLIPS, DEFAULT_FLAKY_RUNS
from pytest_graphrag_eval.corpus.shards import ShardSpec
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.thresholds import Threshold
from pytest_graphrag_eval.llm.settings import LLMSettings, budget_share
from pytest_graphrag_eval.report.shown_path import shown_path
from pytest_graphrag_eval.run.run_identity import file_sha256

DEFAULT_AGENT_CONCURRENCY = 4


class HistoryRef(str):
    """`--graphrag-baseline history:REF`: the REF, told apart from a baseline file's path by its type."""


@dataclass(frozen=True)
class RunConfiguration:
    """Everything the run was configured with, resolved (the plugin's `PluginSettings` checks it)."""

    corpus_paths: tuple[Path, ...] = ()
    corpus_from_cli: bool = False
    responses_path: Path | None = None
    responses_format: str = "auto"
    trace_question_attribute: str = QUESTION_ID_ATTRIBUTE
    tool_names: Mapping[str, str] = field(default_factory=dict)  # ini, then command line, per tool
    record_path: Path | None = None
    report_path: Path | None = None
    baseline: Path | HistoryRef | None = None  # a report file, or history:REF (a run of the history)
    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    markdown_path: Path | None = None
    html_path: Path | None = None
    judge_labels_path: Path | None = None
    reviews_path: Path | None = None
    review_queue_path: Path | None = None
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)  # ini, then command line, per metric
    gates: tuple[Gate, ...] = ()  # ini, then command line
    steps_scope: str = "last_group"
    agent_concurrency: int = DEFAULT_AGENT_CONCURRENCY
    agent_timeout: float | None = None
    agent_repeats: int = 1
    repeat_policy: str = "all"
    answers_config: Path | None = None
    clear_cache: bool = False
    sparql_endpoint: str | None = None
    sparql_timeout: float = 30.0
    sparql_concurrency: int = 8
    sparql_base_iri: str | None = None
    sparql_service: str | None = None
    check_references: bool = False
    update_references: bool = False
    graph_coverage: bool = False
    execute: str | None = None
    shard: ShardSpec | None = None
    history_url: str | None = None  # a path made absolute, or a URL as given
    history_required: bool = False
    history_run_key: str | None = None
    flaky_runs: int = DEFAULT_FLAKY_RUNS
    flaky_flips: int = DEFAULT_FLAKY_FLIPS
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)  # the whole run's (its budget too)
    workers: int = 1  # processes sharing the judge budget (xdist workers)
    llm_only_given: tuple[str, ...] = ()  # flags of LLM-only settings the user gave (plugin/settings.py)
    shown_from: tuple[Path, ...] = ()  # the rootdir and the invocation folder: outputs name files from them

    @property
    def baseline_path(self) -> Path | None:
        return self.baseline if isinstance(self.baseline, Path) else None

    @property
    def baseline_history(self) -> str | None:
        """`--graphrag-baseline history:REF`: the REF."""
        return str(self.baseline) if isinstance(self.baseline, HistoryRef) else None

    @property
    def client_llm(self) -> LLMSettings:
        """This process's judge-client settings: its share of the run's budget."""
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
