"""The baseline, recorded responses, judge client and graph, opened before collection so a broken
file, a missing API key or an unreachable endpoint is a usage error before any question runs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.compare.numeric import require_statistics
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.corpus.responses import load_response_attempts
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.gates.model import JUDGE, TREND
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.plugin.xdist_workers import GRAPH_STORE_KEY, ProcessRole
from pytest_graphrag_eval.run.graph_stage import GraphStage, check_graph_location
from pytest_graphrag_eval.run.run_history import read_history

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm import JudgeClient


@dataclass
class RunStart:
    """The run's baseline, recorded responses, judge client and graph, opened once."""

    baseline: JsonObject | None = None
    baseline_name: str | None = None  # how reports name the baseline: its file, or history:REF's run
    baseline_results: dict[str, JsonObject] = field(default_factory=dict)
    responses: dict[str, list[ResponseRecord]] | None = None
    judge: JudgeClient | None = None
    graph: GraphStage | None = None


def start_run(config: pytest.Config, settings: PluginSettings, role: ProcessRole) -> RunStart:
    baseline, baseline_name = _load_baseline(settings, Path(config.rootpath))
    if baseline is not None or any(gate.over == TREND for gate in settings.gates):
        require_statistics()  # a missing numpy/scipy is said now, not after every question ran
    needing_baseline = [gate.expression for gate in settings.gates if gate.needs_baseline]
    if needing_baseline and baseline is None:
        raise ConfigurationError(
            f"gate {needing_baseline[0]} compares with a baseline run: pass --graphrag-baseline PATH "
            "(the JSON report of an earlier run, e.g. main's CI artifact)"
        )
    needing_history = [gate.expression for gate in settings.gates if gate.needs_history]
    if needing_history and settings.history_url is None:
        raise ConfigurationError(
            f"gate {needing_history[0]} looks at earlier runs: pass --graphrag-history URL"
        )
    needing_labels = [gate.expression for gate in settings.gates if gate.over == JUDGE]
    if needing_labels and settings.judge_labels_path is None:
        raise ConfigurationError(
            f"gate {needing_labels[0]} checks the judge against people's labels: "
            "pass --graphrag-judge-labels FILE"
        )
    start = RunStart(
        baseline,
        baseline_name,
        {str(result["question_id"]): result for result in (baseline or {}).get("results", [])},
    )
    if settings.corpus_paths and settings.answers.needs_llm:
        # Made in every process, so a missing API key or an unusable cache folder is a usage error
        # everywhere; an xdist controller scores nothing and keeps none (its workers' stats add up).
        client = new_judge_client(settings)
        start.judge = client if role.scores else None
    if settings.responses_path:
        start.responses = load_response_attempts(
            settings.responses_path,
            settings.responses_format,
            settings.trace_question_attribute,
            shown=settings.shown(settings.responses_path),  # sources quoted in reports: no checkout path
        )
    if settings.uses_graph:
        start.graph = graph = GraphStage(settings, Path(config.rootpath))
        graph.check_remote()
        if role is ProcessRole.CONTROLLER:
            graph.share_with_workers()  # load once here; a broken RDF file is a usage error now
        elif role is ProcessRole.WORKER:
            graph.shared_store = config.workerinput.get(GRAPH_STORE_KEY)  # type: ignore[attr-defined]
    elif settings.graph_coverage and role is not ProcessRole.WORKER:
        check_graph_location(settings, Path(config.rootpath))  # opened at the end: a missing file is said now
    return start


def _load_baseline(settings: PluginSettings, root: Path) -> tuple[JsonObject | None, str | None]:
    """The baseline report and how reports name it: a file, or a run of the history (history:REF)."""
    if settings.baseline_path is not None:
        return load_baseline(settings.baseline_path), settings.shown(settings.baseline_path)
    if settings.baseline_history is None:
        return None, None
    if settings.history_url is None:
        raise ConfigurationError(
            f"--graphrag-baseline history:{settings.baseline_history} takes the baseline from the run "
            "history: pass --graphrag-history URL too"
        )
    from pytest_graphrag_eval.history.records import suite_of

    found = read_history(
        settings.history_url,
        environ=os.environ,
        cwd=root,
        window=1,
        flaky_runs=settings.flaky_runs,
        flaky_flips=settings.flaky_flips,
        baseline_ref=settings.baseline_history,
        suite=suite_of(settings.report_metadata()),
    )
    return found.baseline, found.baseline_name


def new_judge_client(settings: PluginSettings) -> JudgeClient:
    from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when a judge is needed
    from pytest_graphrag_eval.llm.batch import judge_batches

    return JudgeClient(settings.client_llm, judge_batches(settings.client_llm))
