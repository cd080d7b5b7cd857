"""Command-line options and ini keys of the plugin, declared in one table.

Each option has one CLI flag and (where it makes sense) one ini key, so `--help`,
the ini file and the README stay in agreement; `settings.py` reads them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pytest

from pytest_graphrag_eval.answers.settings import JUDGES
from pytest_graphrag_eval.steps.groups import SCOPES as STEPS_SCOPES

IniType = Literal["string", "paths", "pathlist", "args", "linelist", "bool"]
"""The ini value types pytest's `Parser.addini` understands that the plugin uses."""


@dataclass(frozen=True)
class OptionSpec:
    """One plugin option: CLI flag, optional ini key, argparse settings and help."""

    flag: str
    dest: str
    help: str
    ini: str | None = None
    ini_type: IniType = "string"
    action: str = "store"
    choices: tuple[str, ...] | None = None
    value_type: type | None = None
    metavar: str | None = None


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "--graphrag-corpus",
        "graphrag_corpus",
        "Reference-corpus YAML file or folder to collect as test items (repeatable).",
        ini="graphrag_corpus",
        ini_type="paths",
        action="append",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-responses",
        "graphrag_responses",
        "Replay agent responses from this JSON/JSONL file instead of calling the agent hook.",
        ini="graphrag_responses",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-responses-format",
        "graphrag_responses_format",
        "Its format if not detected (e.g. otlp).",
        ini="graphrag_responses_format",
        metavar="FORMAT",
    ),
    OptionSpec(
        "--graphrag-question-attribute",
        "graphrag_question_attribute",
        "Span attribute with a trace's question id.",
        ini="graphrag_question_attribute",
        metavar="NAME",
    ),
    OptionSpec(
        "--graphrag-tool-name",
        "graphrag_tool_name",
        "Agent tool name to corpus tool name (repeatable).",
        ini="graphrag_tool_names",
        ini_type="linelist",
        action="append",
        metavar="AGENT=CORPUS",
    ),
    OptionSpec(
        "--graphrag-record",
        "graphrag_record",
        "Write the live agent responses to this JSONL file (the replay format).",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-threshold",
        "graphrag_threshold",
        "Per-question threshold, e.g. 'steps_score>=0.8' (repeatable).",
        ini="graphrag_thresholds",
        ini_type="linelist",
        action="append",
        metavar="EXPR",
    ),
    OptionSpec(
        "--graphrag-gate",
        "graphrag_gate",
        "Suite-level gate on aggregates, e.g. 'steps_score.mean>=0.9' (repeatable).",
        ini="graphrag_gates",
        ini_type="linelist",
        action="append",
        metavar="EXPR",
    ),
    OptionSpec(
        "--graphrag-report",
        "graphrag_report",
        "Write the JSON report (results, aggregates, gates, metadata) to this path.",
        ini="graphrag_report",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-baseline",
        "graphrag_baseline",
        "Compare with the JSON report of an earlier run (e.g. main's), or a run of the history: "
        "history:last, history:last-passed, history:BRANCH; regressions, deltas, gates on change.",
        ini="graphrag_baseline",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-confidence",
        "graphrag_confidence",
        "Confidence level of the baseline comparison's intervals, in percent (default 95).",
        ini="graphrag_confidence",
        value_type=float,
        metavar="PERCENT",
    ),
    OptionSpec(
        "--graphrag-resamples",
        "graphrag_resamples",
        "Bootstrap resamples of the baseline comparison (default 2000; seeded, so runs repeat exactly).",
        ini="graphrag_resamples",
        value_type=int,
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-agent-repeats",
        "graphrag_agent_repeats",
        "Ask the agent K times per question (pass@k, pass^k, flaky questions; default 1).",
        ini="graphrag_agent_repeats",
        value_type=int,
        metavar="K",
    ),
    OptionSpec(
        "--graphrag-repeat-policy",
        "graphrag_repeat_policy",
        "With repeats, an item passes when all (default), any or a majority of its attempts pass.",
        ini="graphrag_repeat_policy",
        choices=("all", "any", "majority"),
    ),
    OptionSpec(
        "--graphrag-html",
        "graphrag_html",
        "Write one self-contained HTML report (no network needed to open it) to this path.",
        ini="graphrag_html",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-markdown",
        "graphrag_markdown",
        "Write a GitHub-flavoured Markdown summary (e.g. $GITHUB_STEP_SUMMARY) to this path.",
        ini="graphrag_markdown",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-steps-scope",
        "graphrag_steps_scope",
        "Which reference step groups steps_score covers: last_group (default) or all_groups.",
        ini="graphrag_steps_scope",
        choices=STEPS_SCOPES,
    ),
    OptionSpec(
        "--graphrag-agent-concurrency",
        "graphrag_agent_concurrency",
        "How many questions the live agent hook answers at once (default 4).",
        ini="graphrag_agent_concurrency",
        value_type=int,
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-agent-timeout",
        "graphrag_agent_timeout",
        "Seconds the live agent hook may take per question; a slower answer is an agent error "
        "for that question (default: no limit).",
        ini="graphrag_agent_timeout",
        metavar="SECONDS",
    ),
    OptionSpec(
        "--graphrag-judge",
        "graphrag_judge",
        "Answer judge: none (default), lexical (offline claims matching) or llm.",
        ini="graphrag_judge",
        choices=JUDGES,
    ),
    OptionSpec(
        "--graphrag-judge-model",
        "graphrag_judge_model",
        "Chat model of the LLM judge (default gpt-4o-mini).",
        ini="graphrag_judge_model",
        metavar="MODEL",
    ),
    OptionSpec(
        "--graphrag-embedding-model",
        "graphrag_embedding_model",
        "Embedding model for answer relevance (default text-embedding-3-small).",
        ini="graphrag_embedding_model",
        metavar="MODEL",
    ),
    OptionSpec(
        "--graphrag-relevance",
        "graphrag_relevance",
        "Also compute RAGAS-style answer relevance with the LLM judge.",
        ini="graphrag_relevance",
        ini_type="bool",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-judge-repeats",
        "graphrag_judge_repeats",
        "Judge each answer k times and report mean and spread (default 1).",
        ini="graphrag_judge_repeats",
        value_type=int,
        metavar="K",
    ),
    OptionSpec(
        "--graphrag-correctness-prompt",
        "graphrag_correctness_prompt",
        "File replacing the answer-correctness prompt ({question}, {reference_answer}, {actual_answer}).",
        ini="graphrag_correctness_prompt",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-answers-config",
        "graphrag_answers_config",
        "YAML file of further answer-metric settings (relevance backend, custom metrics, ...).",
        ini="graphrag_answers_config",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-concurrency",
        "graphrag_concurrency",
        "Maximum LLM requests in flight per process (default 8).",
        ini="graphrag_concurrency",
        value_type=int,
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-cache-dir",
        "graphrag_cache_dir",
        "Folder of the on-disk judge cache (default .graphrag-cache under the rootdir).",
        ini="graphrag_cache_dir",
        ini_type="paths",
        metavar="PATH",
    ),
    OptionSpec(
        "--graphrag-sparql-endpoint",
        "graphrag_sparql_endpoint",
        "The knowledge graph: an RDF file or folder, or an http(s) SPARQL endpoint URL.",
        ini="graphrag_sparql_endpoint",
        metavar="PATH_OR_URL",
    ),
    OptionSpec(
        "--graphrag-check-references",
        "graphrag_check_references",
        "Run every reference query on the graph; report the stale stored outputs.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-update-references",
        "graphrag_update_references",
        "Rewrite stale (and fill missing) reference outputs in the corpus files.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-execute",
        "graphrag_execute",
        "Run live on the graph: the reference queries, the recorded agent queries, or both.",
        ini="graphrag_execute",
        choices=("reference", "agent", "both"),
    ),
    OptionSpec(
        "--graphrag-sparql-timeout",
        "graphrag_sparql_timeout",
        "Seconds per query to an http(s) endpoint (default 30).",
        ini="graphrag_sparql_timeout",
        value_type=float,
        metavar="SECONDS",
    ),
    OptionSpec(
        "--graphrag-sparql-concurrency",
        "graphrag_sparql_concurrency",
        "SPARQL queries in flight per process (default 8).",
        ini="graphrag_sparql_concurrency",
        value_type=int,
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-no-cache",
        "graphrag_no_cache",
        "Neither read nor write the judge cache.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-cache-clear",
        "graphrag_cache_clear",
        "Delete the judge cache before the run.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-cache-only",
        "graphrag_cache_only",
        "Judge from the cache only, connecting nowhere.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-dry-run",
        "graphrag_dry_run",
        "Print the calls, tokens and cost the run would make; call nothing.",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-judge-batch",
        "graphrag_judge_batch",
        "Send the judge calls the cache misses through the OpenAI Batch API (half price, slower).",
        ini="graphrag_judge_batch",
        ini_type="bool",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-max-cost",
        "graphrag_max_cost",
        "Judge budget in USD; unscored questions are not_evaluated. Each request reserves its estimated "
        "cost while in flight, so the spend ends at most one request's estimate above the budget.",
        ini="graphrag_max_cost",
        metavar="USD",
    ),
    OptionSpec(
        "--graphrag-max-calls",
        "graphrag_max_calls",
        "Judge budget in requests.",
        ini="graphrag_max_calls",
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-shard",
        "graphrag_shard",
        "Run shard K of N (e.g. 2/3); merge the shard reports with graphrag-eval-merge.",
        metavar="K/N",
    ),
    OptionSpec(
        "--graphrag-history",
        "graphrag_history",
        "Record the run in this history: an SQLite file (path or sqlite:///PATH) or "
        "postgresql://USER@HOST/DB (password from PGPASSWORD). Read it with graphrag-eval-history.",
        ini="graphrag_history",
        metavar="URL",
    ),
    OptionSpec(
        "--graphrag-history-required",
        "graphrag_history_required",
        "Fail the run when it cannot be recorded in the history (default: say so and carry on).",
        ini="graphrag_history_required",
        ini_type="bool",
        action="store_true",
    ),
    OptionSpec(
        "--graphrag-flaky-runs",
        "graphrag_flaky_runs",
        "With a history, look for flaky questions in the last N runs, this one included (default 10).",
        ini="graphrag_flaky_runs",
        value_type=int,
        metavar="N",
    ),
    OptionSpec(
        "--graphrag-flaky-flips",
        "graphrag_flaky_flips",
        "A question is flaky when its outcome flipped K times in those runs, or passed and failed on one "
        "commit (default 2).",
        ini="graphrag_flaky_flips",
        value_type=int,
        metavar="K",
    ),
    OptionSpec(
        "--graphrag-history-run-key",
        "graphrag_history_run_key",
        "The run's key in the history (default: new; in CI, shards share the CI run's).",
        metavar="KEY",
    ),
)


def add_options(parser: pytest.Parser) -> None:
    """Register every option and ini key under one `graphrag-eval` group."""
    group = parser.getgroup("graphrag-eval", "question-answering regression tests (pytest-graphrag-eval)")
    for spec in OPTIONS:
        kwargs: dict[str, Any] = {"dest": spec.dest, "help": spec.help, "action": spec.action}
        if spec.action in ("store", "append"):
            kwargs["default"] = None
            if spec.metavar:
                kwargs["metavar"] = spec.metavar
            if spec.choices:
                kwargs["choices"] = spec.choices
            if spec.value_type is not None:
                kwargs["type"] = spec.value_type
        else:
            kwargs["default"] = False
        group.addoption(spec.flag, **kwargs)
        if spec.ini:
            parser.addini(spec.ini, help=spec.help, type=spec.ini_type)
