"""What a run opens at start-up, before collection: baseline, recorded responses, judge client, graph.

Each is opened now so that a broken file, a missing API key or an unreachable endpoint is a usage
error before any question runs, in every process of an xdist run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.compare.numeric import require_statistics
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.corpus.responses import load_response_attempts
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.plugin.process_role import ProcessRole
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.run.graph_stage import GraphStage

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm import JudgeClient

GRAPH_STORE_KEY = "graphrag_graph_store"


@dataclass
class RunStart:
    """The run's baseline, recorded responses, judge client and graph, opened once."""

    baseline: dict[str, Any] | None = None
    baseline_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: dict[str, list[ResponseRecord]] | None = None
    judge: JudgeClient | None = None
    graph: GraphStage | None = None


def start_run(config: pytest.Config, settings: PluginSettings, role: ProcessRole) -> RunStart:
    baseline = load_baseline(settings.baseline_path) if settings.baseline_path else None
    if baseline is not None:
        require_statistics()  # a missing numpy/scipy is said now, not after every question ran
    needing_baseline = [gate.expression for gate in settings.gates if gate.needs_baseline]
    if needing_baseline and baseline is None:
        raise ConfigurationError(
            f"gate {needing_baseline[0]} compares with a baseline run: pass --graphrag-baseline PATH "
            "(the JSON report of an earlier run, e.g. main's CI artifact)"
        )
    start = RunStart(
        baseline,
        {str(result["question_id"]): result for result in (baseline or {}).get("results", [])},
    )
    if settings.corpus_paths and settings.answers.needs_llm:
        # Made in every process, so a missing API key or an unusable cache folder is a usage error
        # everywhere; an xdist controller scores nothing and keeps none (its workers' stats add up).
        client = new_judge_client(settings)
        start.judge = client if role.scores else None
    if settings.responses_path:
        start.responses = load_response_attempts(
            settings.responses_path, settings.responses_format, settings.trace_question_attribute
        )
    if settings.uses_graph:
        start.graph = graph = GraphStage(settings, Path(config.rootpath))
        graph.check_remote()
        if role is ProcessRole.CONTROLLER:
            graph.share_with_workers()  # load once here; a broken RDF file is a usage error now
        elif role is ProcessRole.WORKER:
            graph.shared_store = config.workerinput.get(GRAPH_STORE_KEY)  # type: ignore[attr-defined]
    return start


def new_judge_client(settings: PluginSettings) -> JudgeClient:
    from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when a judge is needed

    return JudgeClient(settings.client_llm)
