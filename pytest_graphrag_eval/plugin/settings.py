"""The plugin's one source of truth for configuration.

`PluginSettings.from_config` reads the command line and the ini file and merges
them, with the answers config file and the environment, into a frozen object
that is passed down explicitly; nothing else reads options. The judge part is
resolved by the pytest-free rule of `answers.judge_settings` (command line over
ini over config file over defaults and environment), once per process.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.adapters.replay import RESPONSE_FORMATS
from pytest_graphrag_eval.adapters.tool_names import parse_tool_name_lines
from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, first_set, resolve_judge_settings
from pytest_graphrag_eval.answers.settings import JUDGES, AnswerSettings
from pytest_graphrag_eval.compare.comparison import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from pytest_graphrag_eval.compare.repeats import POLICIES
from pytest_graphrag_eval.compare.run_history import DEFAULT_FLAKY_FLIPS, DEFAULT_FLAKY_RUNS
from pytest_graphrag_eval.corpus.shards import ShardSpec, parse_shard
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.gates.history_gates import MAX_WINDOW as MAX_HISTORY_WINDOW
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import parse_gate_list
from pytest_graphrag_eval.gates.thresholds import Threshold, parse_threshold_list
from pytest_graphrag_eval.llm.settings import LLMSettings, budget_share
from pytest_graphrag_eval.report.run_identity import file_sha256, settings_record
from pytest_graphrag_eval.run.run_history import history_baseline_ref
from pytest_graphrag_eval.steps.groups import SCOPES as STEPS_SCOPES

DEFAULT_AGENT_CONCURRENCY = 4
# Upper bounds catch typos (an extra zero) before they open thousands of threads or connections.
MAX_CONCURRENCY = 1024
MAX_JUDGE_REPEATS = 100
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class PluginSettings:
    """Everything the plugin was configured with, already validated."""

    corpus_paths: tuple[Path, ...] = ()
    corpus_from_cli: bool = False
    responses_path: Path | None = None
    responses_format: str = "auto"
    trace_question_attribute: str = QUESTION_ID_ATTRIBUTE
    tool_names: Mapping[str, str] = field(default_factory=dict)  # ini, then command line
    record_path: Path | None = None
    report_path: Path | None = None
    baseline_path: Path | None = None
    baseline_history: str | None = None  # --graphrag-baseline history:REF: the run REF of the history
    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    markdown_path: Path | None = None
    html_path: Path | None = None
    thresholds_ini: Mapping[str, Threshold] = field(default_factory=dict)
    thresholds_cli: Mapping[str, Threshold] = field(default_factory=dict)
    gates: tuple[Gate, ...] = ()  # ini, then command line
    steps_scope: str = "last_group"
    agent_concurrency: int = DEFAULT_AGENT_CONCURRENCY
    agent_timeout: float | None = None
    judge: str | None = None
    judge_model: str | None = None
    embedding_model: str | None = None
    relevance: bool = False
    judge_repeats: int | None = None  # None: the answers config's value, else 1
    agent_repeats: int = 1
    repeat_policy: str = "all"
    correctness_prompt: Path | None = None
    answers_config: Path | None = None
    llm_concurrency: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    clear_cache: bool = False
    sparql_endpoint: str | None = None
    sparql_timeout: float = 30.0
    sparql_concurrency: int = 8
    check_references: bool = False
    update_references: bool = False
    execute: str | None = None
    cache_only: bool = False
    dry_run: bool = False
    judge_batch: bool = False
    max_cost: float | None = None
    max_calls: int | None = None
    shard: ShardSpec | None = None
    history_url: str | None = None  # a path made absolute, or a URL as given
    history_required: bool = False
    history_run_key: str | None = None
    flaky_runs: int = DEFAULT_FLAKY_RUNS
    flaky_flips: int = DEFAULT_FLAKY_FLIPS
    # Resolved from the options above, the answers config file and the environment (from_config).
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)  # an xdist worker's: its share of the budget

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
    def from_config(cls, config: pytest.Config) -> PluginSettings:
        """Read CLI options (relative to the invocation dir) over ini keys (relative to the ini file)."""
        invocation_dir = Path(config.invocation_params.dir)
        cli_corpus = [invocation_dir / path for path in config.getoption("graphrag_corpus") or []]
        ini_corpus = list(config.getini("graphrag_corpus") or [])
        layers = [_judge_options(config, layer, invocation_dir) for layer in ("cli", "ini")]
        judge = first_set(layers)  # the command line over the ini file
        default_cache = Path(config.rootpath) / ".graphrag-cache"
        settings = cls(
            corpus_paths=tuple(cli_corpus or ini_corpus),
            corpus_from_cli=bool(cli_corpus),
            responses_path=_path(config, "graphrag_responses", invocation_dir),
            responses_format=_text(config, "graphrag_responses_format") or "auto",
            trace_question_attribute=_text(config, "graphrag_question_attribute") or QUESTION_ID_ATTRIBUTE,
            tool_names={
                **parse_tool_name_lines(config.getini("graphrag_tool_names"), "ini graphrag_tool_names"),
                **parse_tool_name_lines(config.getoption("graphrag_tool_name") or [], "--graphrag-tool-name"),
            },
            record_path=_path(config, "graphrag_record", invocation_dir, ini=False),
            report_path=_path(config, "graphrag_report", invocation_dir),
            **_baseline(config, invocation_dir),
            confidence=_percent(config, "graphrag_confidence", DEFAULT_CONFIDENCE),
            resamples=_integer(config, "graphrag_resamples", DEFAULT_RESAMPLES),
            markdown_path=_path(config, "graphrag_markdown", invocation_dir),
            html_path=_path(config, "graphrag_html", invocation_dir),
            thresholds_ini=parse_threshold_list(config.getini("graphrag_thresholds"), "ini"),
            thresholds_cli=parse_threshold_list(config.getoption("graphrag_threshold"), "cli"),
            gates=(
                *parse_gate_list(config.getini("graphrag_gates"), "ini"),
                *parse_gate_list(config.getoption("graphrag_gate"), "cli"),
            ),
            steps_scope=_text(config, "graphrag_steps_scope") or "last_group",
            agent_concurrency=_integer(config, "graphrag_agent_concurrency", DEFAULT_AGENT_CONCURRENCY),
            agent_timeout=_number(config, "graphrag_agent_timeout"),
            judge=judge.judge,
            judge_model=judge.judge_model,
            embedding_model=judge.embedding_model,
            relevance=bool(judge.relevance),
            judge_repeats=judge.repeats,
            agent_repeats=_integer(config, "graphrag_agent_repeats", 1),
            repeat_policy=_text(config, "graphrag_repeat_policy") or "all",
            correctness_prompt=judge.correctness_prompt,
            answers_config=_path(config, "graphrag_answers_config", invocation_dir),
            llm_concurrency=judge.concurrency,
            cache_dir=judge.cache_dir or default_cache,
            use_cache=judge.use_cache is not False,
            clear_cache=bool(config.getoption("graphrag_cache_clear")),
            sparql_endpoint=_endpoint(config, invocation_dir),
            sparql_timeout=_number(config, "graphrag_sparql_timeout") or 30.0,
            sparql_concurrency=_integer(config, "graphrag_sparql_concurrency", 8),
            check_references=bool(config.getoption("graphrag_check_references")),
            update_references=bool(config.getoption("graphrag_update_references")),
            execute=_text(config, "graphrag_execute"),
            cache_only=bool(judge.cache_only),
            dry_run=bool(judge.dry_run),
            max_cost=judge.max_cost_usd,
            max_calls=judge.max_calls,
            judge_batch=bool(judge.batch),
            shard=parse_shard(config.getoption("graphrag_shard"))
            if config.getoption("graphrag_shard")
            else None,
            history_url=_history_url(config, invocation_dir),
            history_required=bool(
                config.getoption("graphrag_history_required") or config.getini("graphrag_history_required")
            ),
            history_run_key=_text(config, "graphrag_history_run_key", "cli"),
            flaky_runs=_integer(config, "graphrag_flaky_runs", DEFAULT_FLAKY_RUNS),
            flaky_flips=_integer(config, "graphrag_flaky_flips", DEFAULT_FLAKY_FLIPS),
        )
        settings.validate()
        with warnings.catch_warnings(record=True) as ignored_keys:  # a graphrag-eval file's unused keys
            warnings.simplefilter("always")
            resolved = resolve_judge_settings(
                layers, settings.answers_config, defaults=JudgeOptions(judge="none", cache_dir=default_cache)
            )
        for warning in ignored_keys:  # shown in pytest's warnings summary, under its -W filters
            config.issue_config_time_warning(_as_warning(warning.message), stacklevel=2)
        workers = int(getattr(config, "workerinput", {}).get("workercount", 1) or 1)
        return dataclasses.replace(
            settings, answers=resolved.answers, llm=budget_share(resolved.llm, workers)
        )

    def report_metadata(self) -> dict[str, Any]:
        """What the run was configured with, as the JSON report's metadata records it."""
        return {
            "corpus": [str(path) for path in self.corpus_paths],
            "responses": str(self.responses_path) if self.responses_path else "live",
            "steps_scope": self.steps_scope,
            "judge": self.judge,
            "judge_model": self.judge_model,
        }

    def settings_record(self, gates: Sequence[Gate]) -> dict[str, Any]:
        """The settings that change results, verdicts, gates or the comparison (shards must share them)."""
        baseline = self.baseline_path
        return settings_record(
            thresholds=[*self.thresholds_ini.values(), *self.thresholds_cli.values()],
            gates=gates,
            confidence=self.confidence,
            resamples=self.resamples,
            baseline={"path": str(baseline), "sha256": _file_identity(baseline)} if baseline else None,
            other={
                "responses": _file_identity(self.responses_path),  # by content: shards compare it
                "embedding_model": self.embedding_model,
                "relevance": self.relevance,
                "judge_repeats": self.judge_repeats,
                "agent_repeats": self.agent_repeats,
                "repeat_policy": self.repeat_policy,
                "correctness_prompt": _file_identity(self.correctness_prompt),
                "answers_config": _file_identity(self.answers_config),
            },
        )

    def validate(self) -> None:
        """Reject values argparse cannot check (ini values are plain text)."""
        if self.steps_scope not in STEPS_SCOPES:
            raise ConfigurationError(
                f"graphrag_steps_scope must be one of {', '.join(STEPS_SCOPES)}, got {self.steps_scope!r}"
            )
        if self.responses_format not in RESPONSE_FORMATS:
            raise ConfigurationError(
                f"graphrag_responses_format must be one of {', '.join(RESPONSE_FORMATS)}, "
                f"got {self.responses_format!r}"
            )
        if self.repeat_policy not in POLICIES:
            raise ConfigurationError(
                f"graphrag_repeat_policy must be one of {', '.join(POLICIES)}, got {self.repeat_policy!r}"
            )
        if self.judge is not None and self.judge not in JUDGES:
            raise ConfigurationError(f"graphrag_judge must be one of {', '.join(JUDGES)}, got {self.judge!r}")
        for name, value, most in (
            ("graphrag_agent_concurrency", self.agent_concurrency, MAX_CONCURRENCY),
            ("graphrag_judge_repeats", self.judge_repeats, MAX_JUDGE_REPEATS),
            ("graphrag_agent_repeats", self.agent_repeats, MAX_JUDGE_REPEATS),
            ("graphrag_concurrency", self.llm_concurrency, MAX_CONCURRENCY),
            ("graphrag_resamples", self.resamples, MAX_RESAMPLES),
            ("graphrag_flaky_runs", self.flaky_runs, MAX_HISTORY_WINDOW),
            ("graphrag_flaky_flips", self.flaky_flips, MAX_HISTORY_WINDOW),
        ):
            if value is not None and not 1 <= value <= most:
                raise ConfigurationError(f"{name} must be between 1 and {most}, got {value}")
        self._validate_graph()
        timeout = self.agent_timeout
        if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
            raise ConfigurationError(f"graphrag_agent_timeout must be a number of seconds > 0, got {timeout}")
        if self.cache_only and not self.use_cache:
            raise ConfigurationError(
                "--graphrag-cache-only answers judge calls from the cache, which --graphrag-no-cache "
                "turns off; use one"
            )
        if self.judge_batch:
            self._validate_batch()
        if self.record_path is not None and self.responses_path is not None:
            raise ConfigurationError(
                "--graphrag-record records live agent answers, but --graphrag-responses (or the "
                "graphrag_responses ini key) replays recorded ones, so nothing would be recorded; use one"
            )

    def _validate_batch(self) -> None:
        """--graphrag-judge-batch fills the cache by sending requests, and is billed when a batch ends."""
        if self.cache_only:
            raise ConfigurationError(
                "--graphrag-judge-batch sends the judge calls the cache misses, --graphrag-cache-only sends "
                "none; use one"
            )
        if not self.use_cache:
            raise ConfigurationError(
                "--graphrag-judge-batch stores the batch's replies in the judge cache, which "
                "--graphrag-no-cache turns off; use one"
            )
        budget = "--graphrag-max-cost" if self.max_cost is not None else "--graphrag-max-calls"
        if self.max_cost is not None or self.max_calls is not None:
            raise ConfigurationError(
                f"--graphrag-judge-batch: a batch is billed as a whole when it ends, so {budget} cannot "
                "stop it midway; drop the budget (--graphrag-dry-run shows what the batch would cost)"
            )

    def _validate_graph(self) -> None:
        if self.execute is not None and self.execute not in ("reference", "agent", "both"):
            raise ConfigurationError(
                f"graphrag_execute must be one of reference, agent, both, got {self.execute!r}"
            )
        wants = [
            flag
            for flag, on in (
                ("--graphrag-check-references", self.check_references),
                ("--graphrag-update-references", self.update_references),
                (f"--graphrag-execute {self.execute}", self.execute is not None),
            )
            if on
        ]
        if wants and self.sparql_endpoint is None:
            raise ConfigurationError(
                f"{wants[0]} needs a graph: pass --graphrag-sparql-endpoint (an RDF file or folder, "
                "or an http(s):// SPARQL endpoint URL), or set the graphrag_sparql_endpoint ini key"
            )
        if not (math.isfinite(self.sparql_timeout) and self.sparql_timeout > 0):
            raise ConfigurationError(
                f"graphrag_sparql_timeout must be a number of seconds > 0, got {self.sparql_timeout}"
            )
        if not 1 <= self.sparql_concurrency <= MAX_CONCURRENCY:
            raise ConfigurationError(
                f"graphrag_sparql_concurrency must be between 1 and {MAX_CONCURRENCY}, "
                f"got {self.sparql_concurrency}"
            )


def _as_warning(message: Warning | str) -> Warning:
    return message if isinstance(message, Warning) else UserWarning(message)


def _endpoint(config: pytest.Config, invocation_dir: Path) -> str | None:
    """The endpoint option: a URL as given; a path relative to the invocation dir (CLI) or the
    ini file's folder (ini key)."""
    value = config.getoption("graphrag_sparql_endpoint")
    base = invocation_dir
    if value is None:
        value = config.getini("graphrag_sparql_endpoint") or None
        base = Path(config.inipath).parent if config.inipath else invocation_dir
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    if text.lower().startswith(("http://", "https://")):
        return text
    return str(base / text)


def _file_identity(path: Path | None) -> str | None:
    """A file the run read, by content (shards may hold it at different paths); None if it is gone."""
    return file_sha256(path) if path is not None and path.is_file() else None


def _judge_options(config: pytest.Config, layer: str, invocation_dir: Path) -> JudgeOptions:
    """The judge options one layer ("cli" or "ini") sets; flags without an ini key are command line only."""
    cli = layer == "cli"

    def flag(name: str) -> bool | None:
        return True if cli and config.getoption(name) else None

    relevance = config.getoption("graphrag_relevance") if cli else config.getini("graphrag_relevance")
    batch = config.getoption("graphrag_judge_batch") if cli else config.getini("graphrag_judge_batch")
    return JudgeOptions(
        judge=_text(config, "graphrag_judge", layer),
        judge_model=_text(config, "graphrag_judge_model", layer),
        embedding_model=_text(config, "graphrag_embedding_model", layer),
        relevance=True if relevance else None,
        repeats=_integer(config, "graphrag_judge_repeats", None, layer),
        correctness_prompt=_path(config, "graphrag_correctness_prompt", invocation_dir, layer=layer),
        concurrency=_integer(config, "graphrag_concurrency", None, layer),
        cache_dir=_path(config, "graphrag_cache_dir", invocation_dir, layer=layer),
        use_cache=False if flag("graphrag_no_cache") else None,
        cache_only=flag("graphrag_cache_only"),
        dry_run=flag("graphrag_dry_run"),
        batch=True if batch else None,
        max_cost_usd=_limit(config, "graphrag_max_cost", float, "a number of USD", layer),
        max_calls=_limit(config, "graphrag_max_calls", int, "a whole number of calls", layer),
    )


def _text(config: pytest.Config, name: str, layer: str = "both") -> str | None:
    """An option's text: the command line's (layer "cli"), the ini file's ("ini") or the first set."""
    value = config.getoption(name) if layer != "ini" else None
    if value is None and layer != "cli":
        value = config.getini(name) or None
    return str(value).strip() if value is not None else None


def _integer(config: pytest.Config, name: str, default: Any, layer: str = "both") -> Any:
    value = _text(config, name, layer)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number, got {value!r}") from None


def _number(config: pytest.Config, name: str) -> float | None:
    value = _text(config, name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number, got {value!r}") from None


def _limit(config: pytest.Config, name: str, kind: type[Any], what: str, layer: str = "both") -> Any:
    """A budget limit: a finite number >= 0 of the given kind, or None when unset."""
    value = _text(config, name, layer)
    if value is None:
        return None
    flag = "--" + name.replace("_", "-")
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or not (math.isfinite(number) and number >= 0):
        raise ConfigurationError(f"{flag} (ini {name}) must be {what} >= 0, got {value!r}")
    return number


def _percent(config: pytest.Config, name: str, default: float) -> float:
    """A confidence given in percent (95) as a fraction (0.95); 50 to below 100."""
    value = _text(config, name)
    if value is None:
        return default
    try:
        percent = float(value)
    except ValueError:
        raise ConfigurationError(f"{name} must be a percentage such as 95, got {value!r}") from None
    if not 50 <= percent < 100:
        raise ConfigurationError(f"{name} must be from 50 to below 100 (percent), got {value!r}")
    return percent / 100


def _baseline(config: pytest.Config, invocation_dir: Path) -> dict[str, Any]:
    """A baseline report file (relative to the invocation dir or the ini file), or `history:REF`."""
    value = _text(config, "graphrag_baseline", "cli")
    base = invocation_dir
    if value is None:
        value = _text(config, "graphrag_baseline", "ini")
        base = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
    if not value:
        return {}
    ref = history_baseline_ref(value)
    return {"baseline_history": ref} if ref is not None else {"baseline_path": base / value}


def _history_url(config: pytest.Config, invocation_dir: Path) -> str | None:
    """A history URL as given, or a file path relative to the invocation dir (CLI) or the ini file."""
    value = _text(config, "graphrag_history", "cli")
    base = invocation_dir
    if value is None:
        value = _text(config, "graphrag_history", "ini")
        base = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
    if not value:
        return None
    return value if "://" in value else str(base / value)


def _path(
    config: pytest.Config, name: str, invocation_dir: Path, *, ini: bool = True, layer: str = "both"
) -> Path | None:
    """A command-line path relative to the invocation dir, else the ini key's (relative to the ini file)."""
    value = config.getoption(name) if layer != "ini" else None
    if value is not None:
        return invocation_dir / Path(value)
    if not ini or layer == "cli":
        return None
    paths = config.getini(name)
    return Path(paths[0]) if paths else None
