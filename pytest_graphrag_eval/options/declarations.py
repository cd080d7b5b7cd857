"""Every setting of the plugin, declared once, so the plugin, its docs table and the console scripts
parse, range-check and word errors about a value alike.

Layers, highest first: the command line, the ini file, for judge settings (with a `file_key`) the
`--graphrag-answers-config` file, then the default. A scalar takes the highest layer that sets it; a
mapping (`per_key`) is merged key by key in that order; a list (`concat`) keeps the ini's entries
then the command line's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pytest_graphrag_eval import compare
from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.adapters.replay import RESPONSE_FORMATS
from pytest_graphrag_eval.answers.judge_kinds import JUDGES
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.steps import SCOPES as STEPS_SCOPES

IniType = Literal["string", "paths", "linelist", "bool"]
"""The ini value types of pytest's `Parser.addini` that the plugin uses."""
Merge = Literal["first", "per_key", "concat"]
"""How the layers of one setting combine (see the module docstring)."""

DEFAULT_AGENT_CONCURRENCY = 4
EXECUTE_MODES = ("reference", "agent", "both")
# Upper bounds catch typos (an extra zero) before they open thousands of threads or connections.
MAX_CONCURRENCY = 1024
MAX_REPEATS = 100
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class OptionSpec:
    """One setting: its CLI flag, optional ini key and answers-config key, parser, default and merge rule."""

    flag: str
    help: str
    ini: str | None = ""
    """Its ini key: by default the flag's name (`--graphrag-report`: `graphrag_report`); None: none."""
    action: str = "store"
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    parse: Callable[[P.RawValue, str, str], object] | None = None
    """Its parser (`options/parsers.py`); by default an on/off flag's is `P.flag`, any other's `P.text`."""
    default: object = None
    merge: Merge = "first"
    setting_name: str | None = None
    """The `RunConfiguration` field of the merged value when it is not named after the flag."""
    file_key: str | None = None
    """The judge setting's name in `JudgeOptions`, so also in the answers config file (None: no file key)."""

    def __post_init__(self) -> None:
        if self.ini == "":
            object.__setattr__(self, "ini", self.dest)

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def setting(self) -> str | None:
        """The `RunConfiguration` field that receives the merged value (`--graphrag-confidence`:
        `confidence`); None for a judge setting, resolved into its `answers` and `llm` instead."""
        return None if self.file_key else self.setting_name or self.dest.removeprefix("graphrag_")

    @property
    def ini_type(self) -> IniType:
        """The ini value's type, as its parser takes it (paths: pytest makes them absolute)."""
        if self.parse in (P.path, P.paths):
            return "paths"
        if self.action == "store_true":
            return "bool"
        return "linelist" if self.action == "append" else "string"

    @property
    def shown_metavar(self) -> str | None:
        """The value's name in help texts: the declared one, else the choices."""
        return self.metavar or ("{" + ",".join(self.choices) + "}" if self.choices else None)

    @property
    def label(self) -> str:
        """How errors name the setting: both of its spellings."""
        return f"{self.flag} (ini {self.ini})" if self.ini else self.flag

    def parse_layer(self, value: P.RawValue, layer: str) -> object:
        """One layer's value ("cli" or "ini"), checked; errors name both spellings."""
        if self.choices is not None:
            return P.choice(*self.choices)(value, self.label, layer)
        parse = self.parse or (P.flag if self.action == "store_true" else P.text)
        return parse(value, self.label, layer)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "--graphrag-corpus",
        "Reference-corpus YAML file or folder to collect as test items (repeatable).",
        action="append",
        metavar="PATH",
        parse=P.paths,
        default=(),
        setting_name="corpus_paths",
    ),
    OptionSpec(
        "--graphrag-responses",
        "Replay agent responses from this JSON/JSONL file instead of calling the agent hook.",
        metavar="PATH",
        parse=P.path,
        setting_name="responses_path",
    ),
    OptionSpec(
        "--graphrag-responses-format",
        "Its format if not detected (e.g. otlp).",
        metavar="FORMAT",
        choices=RESPONSE_FORMATS,
        default="auto",
    ),
    OptionSpec(
        "--graphrag-question-attribute",
        "Span attribute with a trace's question id.",
        metavar="NAME",
        default=QUESTION_ID_ATTRIBUTE,
        setting_name="trace_question_attribute",
    ),
    OptionSpec(
        "--graphrag-tool-name",
        "Agent tool name to corpus tool name (repeatable).",
        ini="graphrag_tool_names",
        action="append",
        metavar="AGENT=CORPUS",
        parse=P.tool_names,
        merge="per_key",
        default={},
        setting_name="tool_names",
    ),
    OptionSpec(
        "--graphrag-record",
        "Write the live agent responses to this JSONL file (the replay format).",
        ini=None,
        metavar="PATH",
        parse=P.path,
        setting_name="record_path",
    ),
    OptionSpec(
        "--graphrag-threshold",
        "Per-question threshold, e.g. 'steps_score>=0.8' (repeatable).",
        ini="graphrag_thresholds",
        action="append",
        metavar="EXPR",
        parse=P.thresholds,
        merge="per_key",
        default={},
        setting_name="thresholds",
    ),
    OptionSpec(
        "--graphrag-gate",
        "Suite-level gate on aggregates, e.g. 'steps_score.mean>=0.9' (repeatable).",
        ini="graphrag_gates",
        action="append",
        metavar="EXPR",
        parse=P.gates,
        merge="concat",
        default=(),
        setting_name="gates",
    ),
    OptionSpec(
        "--graphrag-report",
        "Write the JSON report (results, aggregates, gates, metadata) to this path.",
        metavar="PATH",
        parse=P.path,
        setting_name="report_path",
    ),
    OptionSpec(
        "--graphrag-baseline",
        "Compare with the JSON report of an earlier run (e.g. main's), or a run of the history: "
        "history:last, history:last-passed, history:BRANCH; regressions, deltas, gates on change.",
        metavar="PATH",
        parse=P.baseline,
    ),
    OptionSpec(
        "--graphrag-confidence",
        "Confidence level of the baseline comparison's intervals, in percent (default 95).",
        metavar="PERCENT",
        parse=P.percent,
        default=compare.DEFAULT_CONFIDENCE,
    ),
    OptionSpec(
        "--graphrag-resamples",
        "Bootstrap resamples of the baseline comparison (default 2000; seeded, so runs repeat exactly).",
        metavar="N",
        parse=P.whole_number(1, MAX_RESAMPLES),
        default=compare.DEFAULT_RESAMPLES,
    ),
    OptionSpec(
        "--graphrag-agent-repeats",
        "Ask the agent K times per question (pass@k, pass^k, flaky questions; default 1).",
        metavar="K",
        parse=P.whole_number(1, MAX_REPEATS),
        default=1,
    ),
    OptionSpec(
        "--graphrag-repeat-policy",
        "With repeats, an item passes when all (default), any or a majority of its attempts pass.",
        choices=compare.POLICIES,
        default="all",
    ),
    OptionSpec(
        "--graphrag-html",
        "Write one self-contained HTML report (no network needed to open it) to this path.",
        metavar="PATH",
        parse=P.path,
        setting_name="html_path",
    ),
    OptionSpec(
        "--graphrag-markdown",
        "Write a GitHub-flavoured Markdown summary (e.g. $GITHUB_STEP_SUMMARY) to this path.",
        metavar="PATH",
        parse=P.path,
        setting_name="markdown_path",
    ),
    OptionSpec(
        "--graphrag-judge-labels",
        "Calibrate the judge first: judge the answers people labelled in this file (YAML or JSONL) and "
        "report its agreement with them; gate it with judge:METRIC.kappa>=X.",
        metavar="PATH",
        parse=P.path,
        setting_name="judge_labels_path",
    ),
    OptionSpec(
        "--graphrag-reviews",
        "Reviewers' verdicts (YAML or JSONL): each decides its question while the agent gives the "
        "answer it reviewed, and lapses when the answer changes; reviews also serve as labels.",
        metavar="PATH",
        parse=P.path,
        setting_name="reviews_path",
    ),
    OptionSpec(
        "--graphrag-review-queue",
        "Write the questions most worth a person's look to this path: Markdown, or CSV when it ends in .csv.",
        metavar="PATH",
        parse=P.path,
        setting_name="review_queue_path",
    ),
    OptionSpec(
        "--graphrag-steps-scope",
        "Which reference step groups steps_score covers: last_group (default) or all_groups.",
        choices=STEPS_SCOPES,
        default="last_group",
    ),
    OptionSpec(
        "--graphrag-agent-concurrency",
        "How many questions the live agent hook answers at once (default 4).",
        metavar="N",
        parse=P.whole_number(1, MAX_CONCURRENCY),
        default=DEFAULT_AGENT_CONCURRENCY,
    ),
    OptionSpec(
        "--graphrag-agent-timeout",
        "Seconds the live agent hook may take per question; a slower answer is an agent error "
        "for that question (default: no limit).",
        metavar="SECONDS",
        parse=P.seconds,
    ),
    OptionSpec(
        "--graphrag-judge",
        "Answer judge: none (default), lexical (offline claims matching) or llm.",
        choices=JUDGES,
        file_key="judge",
    ),
    OptionSpec(
        "--graphrag-judge-model",
        "Chat model of the LLM judge (default gpt-4o-mini).",
        metavar="MODEL",
        file_key="judge_model",
    ),
    OptionSpec(
        "--graphrag-embedding-model",
        "Embedding model for answer relevance (default text-embedding-3-small).",
        metavar="MODEL",
        file_key="embedding_model",
    ),
    OptionSpec(
        "--graphrag-relevance",
        "Also compute RAGAS-style answer relevance with the LLM judge.",
        action="store_true",
        file_key="relevance",
    ),
    OptionSpec(
        "--graphrag-judge-repeats",
        "Judge each answer k times and report mean and spread (default 1).",
        metavar="K",
        parse=P.whole_number(1, MAX_REPEATS),
        file_key="repeats",
    ),
    OptionSpec(
        "--graphrag-correctness-prompt",
        "File replacing the answer-correctness prompt ({question}, {reference_answer}, {actual_answer}).",
        metavar="PATH",
        parse=P.path,
        file_key="correctness_prompt",
    ),
    OptionSpec(
        "--graphrag-answers-config",
        "YAML file of further answer-metric settings (relevance backend, custom metrics, ...).",
        metavar="PATH",
        parse=P.path,
    ),
    OptionSpec(
        "--graphrag-concurrency",
        "Maximum LLM requests in flight per process (default 8).",
        metavar="N",
        parse=P.whole_number(1, MAX_CONCURRENCY),
        file_key="concurrency",
    ),
    OptionSpec(
        "--graphrag-cache-dir",
        "Folder of the on-disk judge cache (default .graphrag-cache under the rootdir).",
        metavar="PATH",
        parse=P.path,
        file_key="cache_dir",
    ),
    OptionSpec(
        "--graphrag-sparql-endpoint",
        "The knowledge graph: an RDF file or folder, or an http(s) SPARQL endpoint URL.",
        metavar="PATH_OR_URL",
        parse=P.path_or_url,
    ),
    OptionSpec(
        "--graphrag-check-references",
        "Run every reference query on the graph; report the stale stored outputs.",
        ini=None,
        action="store_true",
        default=False,
    ),
    OptionSpec(
        "--graphrag-update-references",
        "Rewrite stale (and fill missing) reference outputs in the corpus files.",
        ini=None,
        action="store_true",
        default=False,
    ),
    OptionSpec(
        "--graphrag-graph-coverage",
        "Show the graph's classes and properties no reference query names (two queries over the whole "
        "graph, once per run).",
        action="store_true",
        default=False,
    ),
    OptionSpec(
        "--graphrag-execute",
        "Run live on the graph: the reference queries, the recorded agent queries, or both.",
        choices=EXECUTE_MODES,
    ),
    OptionSpec(
        "--graphrag-sparql-base-iri",
        "Base IRI for relative IRIs in the RDF files (default: each file's own file: URI).",
        metavar="IRI",
    ),
    OptionSpec(
        "--graphrag-sparql-service",
        "Endpoint IRIs a SERVICE clause may call (comma-separated), or all (default: none is run).",
        metavar="IRIS",
    ),
    OptionSpec(
        "--graphrag-sparql-timeout",
        "Seconds per query to an http(s) endpoint (default 30).",
        metavar="SECONDS",
        parse=P.seconds,
        default=30.0,
    ),
    OptionSpec(
        "--graphrag-sparql-concurrency",
        "SPARQL queries in flight per process (default 8).",
        metavar="N",
        parse=P.whole_number(1, MAX_CONCURRENCY),
        default=8,
    ),
    OptionSpec(
        "--graphrag-no-cache",
        "Neither read nor write the judge cache.",
        ini=None,
        action="store_true",
        parse=P.no,
        file_key="use_cache",
    ),
    OptionSpec(
        "--graphrag-cache-clear",
        "Delete the judge cache before the run.",
        ini=None,
        action="store_true",
        default=False,
        setting_name="clear_cache",
    ),
    OptionSpec(
        "--graphrag-cache-only",
        "Judge from the cache only, connecting nowhere; a question with a judge call missing from the "
        "cache is not_evaluated, and the run fails.",
        ini=None,
        action="store_true",
        file_key="cache_only",
    ),
    OptionSpec(
        "--graphrag-dry-run",
        "Print the calls, tokens and cost the run would make; call nothing.",
        ini=None,
        action="store_true",
        file_key="dry_run",
    ),
    OptionSpec(
        "--graphrag-judge-batch",
        "Send the judge calls the cache misses through the OpenAI Batch API (half price, slower).",
        action="store_true",
        file_key="batch",
    ),
    OptionSpec(
        "--graphrag-max-cost",
        "Judge budget in USD; unscored questions are not_evaluated. Each request reserves its estimated "
        "cost while in flight, so the spend ends at most one request's estimate above the budget.",
        metavar="USD",
        parse=P.limit(float, "a number of USD"),
        file_key="max_cost_usd",
    ),
    OptionSpec(
        "--graphrag-max-calls",
        "Judge budget in requests.",
        metavar="N",
        parse=P.limit(int, "a whole number of calls"),
        file_key="max_calls",
    ),
    OptionSpec(
        "--graphrag-shard",
        "Run shard K of N (e.g. 2/3); merge the shard reports with graphrag-eval-merge.",
        ini=None,
        metavar="K/N",
        parse=P.shard,
    ),
    OptionSpec(
        "--graphrag-history",
        "Record the run in this history: an SQLite file (path or sqlite:///PATH) or "
        "postgresql://USER@HOST/DB (password from PGPASSWORD). Read it with graphrag-eval-history.",
        metavar="URL",
        parse=P.history_url,
        setting_name="history_url",
    ),
    OptionSpec(
        "--graphrag-history-required",
        "Fail the run when it cannot be recorded in the history (default: say so and carry on).",
        action="store_true",
        default=False,
    ),
    OptionSpec(
        "--graphrag-flaky-runs",
        "With a history, look for flaky questions in the last N runs, this one included (default 10).",
        metavar="N",
        parse=P.whole_number(1, compare.MAX_WINDOW),
        default=compare.DEFAULT_FLAKY_RUNS,
    ),
    OptionSpec(
        "--graphrag-flaky-flips",
        "A question is flaky when its outcome flipped K times in those runs, or passed and failed on one "
        "commit (default 2).",
        metavar="K",
        parse=P.whole_number(1, compare.MAX_WINDOW),
        default=compare.DEFAULT_FLAKY_FLIPS,
    ),
    OptionSpec(
        "--graphrag-history-run-key",
        "The run's key in the history (default: new; in CI, shards share the CI run's).",
        ini=None,
        metavar="KEY",
    ),
)


OPTION_BY_DEST = {spec.dest: spec for spec in OPTIONS}
