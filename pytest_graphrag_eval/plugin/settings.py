"""The plugin's resolved configuration, built once per process from the options table; it keeps
resolved values only, so a reader cannot pick a raw layer by mistake."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, first_set, resolve_judge_settings
from pytest_graphrag_eval.answers.settings import AnswerSettings
from pytest_graphrag_eval.compare.comparison import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from pytest_graphrag_eval.compare.past_runs import DEFAULT_FLAKY_FLIPS, DEFAULT_FLAKY_RUNS
from pytest_graphrag_eval.corpus.shards import ShardSpec
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.thresholds import Threshold
from pytest_graphrag_eval.llm.settings import LLMSettings, budget_share
from pytest_graphrag_eval.options.declarations import DEFAULT_AGENT_CONCURRENCY
from pytest_graphrag_eval.options.parsers import HistoryRef
from pytest_graphrag_eval.plugin.option_values import OptionLayers, judge_layers, merge_layers, read_layers
from pytest_graphrag_eval.plugin.process_role import ProcessRole, worker_count
from pytest_graphrag_eval.report.shown_path import shown_path
from pytest_graphrag_eval.run.run_identity import file_sha256, settings_record

# Judge settings that only the LLM judge uses: given while no LLM judges anything, they would be
# ignored without a word (checked when the run knows whether anything needs the LLM).
LLM_ONLY_OPTIONS = (
    ("graphrag_judge_model", "--graphrag-judge-model"),
    ("graphrag_embedding_model", "--graphrag-embedding-model"),
    ("graphrag_correctness_prompt", "--graphrag-correctness-prompt"),
)


@dataclass(frozen=True)
class PluginSettings:
    """Everything the plugin was configured with, resolved and validated."""

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
    llm_only_given: tuple[str, ...] = ()  # flags of LLM-only settings the user gave (see LLM_ONLY_OPTIONS)
    shown_from: tuple[Path, ...] = ()  # the rootdir and the invocation folder: outputs name files from them

    @property
    def baseline_path(self) -> Path | None:
        return self.baseline if isinstance(self.baseline, Path) else None

    @property
    def baseline_history(self) -> str | None:
        """`--graphrag-baseline history:REF`: the REF."""
        return str(self.baseline) if isinstance(self.baseline, HistoryRef) else None

    @property
    def dry_run(self) -> bool:
        return self.llm.dry_run

    @property
    def judge_batch(self) -> bool:
        return self.llm.batch

    @property
    def cache_only(self) -> bool:
        return self.llm.cache_only

    @property
    def max_cost(self) -> float | None:
        return self.llm.max_cost_usd

    @property
    def max_calls(self) -> int | None:
        return self.llm.max_calls

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

    @classmethod
    def from_config(cls, config: pytest.Config, role: ProcessRole | None = None) -> PluginSettings:
        """Resolve every setting of the options table for this process (`role`: decided by the caller)."""
        role = role or ProcessRole.of(config)
        layers = read_layers(config)
        values = merge_layers(layers)
        default_cache = Path(config.rootpath) / ".graphrag-cache"
        options = judge_layers(layers)
        _check_judge_options(first_set(options))  # before the client settings refuse them less clearly
        with warnings.catch_warnings(record=True) as ignored_keys:  # a graphrag-eval file's unused keys
            warnings.simplefilter("always")
            resolved = resolve_judge_settings(
                options,
                values["answers_config"],  # type: ignore[arg-type]
                defaults=JudgeOptions(judge="none", cache_dir=default_cache),
            )
        for warning in ignored_keys:  # shown in pytest's warnings summary, under its -W filters
            config.issue_config_time_warning(_as_warning(warning.message), stacklevel=2)
        settings = cls(
            **values,  # type: ignore[arg-type]  # each checked by its parser (options.py)
            corpus_from_cli="graphrag_corpus" in layers.cli,
            answers=resolved.answers,
            llm=resolved.llm,
            workers=worker_count(config),
            llm_only_given=_llm_only_given(layers),
            shown_from=(Path(config.rootpath), Path(config.invocation_params.dir)),
        )
        settings.validate(role)
        return settings

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
        return settings_record(
            thresholds=list(self.thresholds.values()),
            gates=gates,
            confidence=self.confidence,
            resamples=self.resamples,
            # `path` is where a merge reads the baseline again; `name` is how its reports show it
            baseline={"name": self.shown(baseline), "path": str(baseline), "sha256": _file_identity(baseline)}
            if baseline
            else {"history": self.baseline_history}
            if self.baseline_history
            else None,
            other={
                "responses": _file_identity(self.responses_path),  # by content: shards compare it
                "embedding_model": self.llm.embedding_model if self.answers.relevance else None,
                "relevance": self.answers.relevance,
                "judge_repeats": self.answers.repeats,
                "agent_repeats": self.agent_repeats,
                "repeat_policy": self.repeat_policy,
                "correctness_prompt": _file_identity(self.answers.correctness_prompt_file),
                "answers_config": _file_identity(self.answers_config),
            },
        )

    def validate(self, role: ProcessRole) -> None:
        """Refuse combinations of settings that cannot work together (each value is checked by its parser)."""
        self._validate_graph()
        if self.record_path is not None and self.responses_path is not None:
            raise ConfigurationError(
                "--graphrag-record records live agent answers, but --graphrag-responses (or the "
                "graphrag_responses ini key) replays recorded ones, so nothing would be recorded; use one"
            )
        if role is ProcessRole.CONTROLLER and self.dry_run:
            raise ConfigurationError("--graphrag-dry-run plans the whole run in one process: drop -n")
        if role is ProcessRole.CONTROLLER and self.judge_batch and not self.dry_run:
            raise ConfigurationError(
                "--graphrag-judge-batch sends the run's judge calls from one process: drop -n"
            )

    def check_llm_only_options(self, llm_judges: bool) -> None:
        """A judge setting that cannot take effect is a usage error, never ignored without a word."""
        if self.llm_only_given and not llm_judges:
            raise ConfigurationError(
                f"{self.llm_only_given[0]} sets the LLM judge, but nothing in this run is judged by an LLM "
                f"(the judge is {self.answers.judge}): add --graphrag-judge llm (or --graphrag-relevance), "
                f"or drop {self.llm_only_given[0]}"
            )

    def _validate_graph(self) -> None:
        wants = [
            flag
            for flag, on in (
                ("--graphrag-check-references", self.check_references),
                ("--graphrag-update-references", self.update_references),
                ("--graphrag-graph-coverage", self.graph_coverage),
                (f"--graphrag-execute {self.execute}", self.execute is not None),
            )
            if on
        ]
        if wants and self.sparql_endpoint is None:
            raise ConfigurationError(
                f"{wants[0]} needs a graph: pass --graphrag-sparql-endpoint (an RDF file or folder, "
                "or an http(s):// SPARQL endpoint URL), or set the graphrag_sparql_endpoint ini key"
            )
        for flag, value in (("base-iri", self.sparql_base_iri), ("service", self.sparql_service)):
            if value is not None and self.sparql_endpoint is None:
                raise ConfigurationError(
                    f"--graphrag-sparql-{flag} needs a graph: pass --graphrag-sparql-endpoint"
                )
        if self.sparql_base_iri is not None:
            if self.sparql_endpoint is not None and self.sparql_endpoint.lower().startswith(
                ("http:", "https:")
            ):
                raise ConfigurationError(
                    "--graphrag-sparql-base-iri applies to RDF files only, not to an http(s) endpoint"
                )
            if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", self.sparql_base_iri):
                raise ConfigurationError(
                    f"graphrag_sparql_base_iri must be an absolute IRI (with a scheme, such as "
                    f"http://data.example.org/), got {self.sparql_base_iri!r}"
                )


def _check_judge_options(given: JudgeOptions) -> None:
    """Judge options that contradict each other, as the command line and the ini file give them."""
    if given.cache_only and given.use_cache is False:
        raise ConfigurationError(
            "--graphrag-cache-only answers judge calls from the cache, which --graphrag-no-cache "
            "turns off; use one"
        )
    if not given.batch:
        return
    # --graphrag-judge-batch fills the cache by sending requests, and is billed when a batch ends.
    if given.cache_only:
        raise ConfigurationError(
            "--graphrag-judge-batch sends the judge calls the cache misses, --graphrag-cache-only sends "
            "none; use one"
        )
    if given.use_cache is False:
        raise ConfigurationError(
            "--graphrag-judge-batch stores the batch's replies in the judge cache, which "
            "--graphrag-no-cache turns off; use one"
        )
    if given.max_cost_usd is not None or given.max_calls is not None:
        budget = "--graphrag-max-cost" if given.max_cost_usd is not None else "--graphrag-max-calls"
        raise ConfigurationError(
            f"--graphrag-judge-batch: a batch is billed as a whole when it ends, so {budget} cannot "
            "stop it midway; drop the budget (--graphrag-dry-run shows what the batch would cost)"
        )


def _llm_only_given(layers: OptionLayers) -> tuple[str, ...]:
    return tuple(
        flag if dest in layers.cli else f"ini {dest}" for dest, flag in LLM_ONLY_OPTIONS if layers.given(dest)
    )


def _as_warning(message: Warning | str) -> Warning:
    return message if isinstance(message, Warning) else UserWarning(message)


def _file_identity(path: Path | None) -> str | None:
    """A file the run read, by content (shards may hold it at different paths); None if it is gone."""
    return file_sha256(path) if path is not None and path.is_file() else None
