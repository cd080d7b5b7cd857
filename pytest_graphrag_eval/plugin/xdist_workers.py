"""The plugin under pytest-xdist: this process's role (plain, controller or worker) and what a worker
does. A worker may start together only the questions it will itself run (else one would be answered
twice), which follows from the distribution mode the controller hands it: under `load` and `worksteal`
only an item and the next one. What it ships back is converted here alone: execnet carries plain
values only, and a result travels as one JSON text (execnet serialises nested dicts object by object
in Python, a string at once)."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.json_types import JsonMapping, JsonObject, Order
from pytest_graphrag_eval.gates.model import Gate

WORKERINPUT_KEY = "graphrag_dist"
GRAPH_STORE_KEY = "graphrag_graph_store"  # the controller's loaded graph, shared with its workers
SHIPMENT_KEY = "graphrag_shipment"
RESULT_ATTR = "graphrag_result"
ORDER_ATTR = "graphrag_order"
RESPONSE_ATTR = "graphrag_response"


class ProcessRole(enum.Enum):
    """Which part of a run this pytest process plays, decided once in `pytest_configure` and passed on,
    so nothing else asks xdist."""

    PLAIN = "plain"
    CONTROLLER = "controller"
    WORKER = "worker"

    @classmethod
    def of(cls, config: pytest.Config) -> ProcessRole:
        if hasattr(config, "workerinput"):
            return cls.WORKER
        return cls.CONTROLLER if getattr(config.option, "numprocesses", None) else cls.PLAIN

    @property
    def scores(self) -> bool:
        """Whether this process answers and scores questions (an xdist controller only collects theirs)."""
        return self is not ProcessRole.CONTROLLER


def worker_count(config: pytest.Config) -> int:
    """How many xdist workers share the run (1 outside xdist): each gets that share of a judge budget."""
    workerinput = getattr(config, "workerinput", None)
    return int((workerinput or {}).get("workercount", 1) or 1)


def dist_mode(config: pytest.Config) -> str:
    """The controller's distribution mode (on a worker: as the controller sent it)."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        return str(workerinput.get(WORKERINPUT_KEY, "load"))
    return str(getattr(config.option, "dist", "no"))


def batching_note(mode: str) -> str | None:
    """A header line for the modes in which a worker can only look one item ahead, else None."""
    if mode in ("each", "loadfile", "loadscope", "loadgroup"):
        return None
    return (
        f"graphrag-eval: with --dist {mode} each xdist worker answers and judges two questions at a time; "
        "--dist loadscope lets a worker work on a whole template at once"
    )


def batch_key(item: pytest.Item, mode: str) -> str:
    """Items sharing a key are guaranteed to run in the same worker."""
    if mode == "each":
        return ""
    if mode == "loadfile":
        return str(item.path)
    if mode == "loadscope":
        return item.nodeid.rsplit("::", 1)[0]
    if mode == "loadgroup":
        groups = sorted(
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        )
        if groups:
            return "@" + "_".join(groups)
    return item.nodeid


class WorkerBatches:
    """Groups a worker's items into batches and hands out each batch once."""

    def __init__(self, items: Sequence[pytest.Item], mode: str):
        self.mode = mode
        self._batches: dict[str, list[pytest.Item]] = {}
        for item in items:
            self._batches.setdefault(batch_key(item, mode), []).append(item)
        self._started: set[str] = set()

    def new_items(self, *items: pytest.Item | None) -> Iterable[pytest.Item]:
        """The batches of `items` not handed out before (`None` entries are skipped)."""
        for item in items:
            if item is None:
                continue
            key = batch_key(item, self.mode)
            if key not in self._started:
                self._started.add(key)
                yield from self._batches.get(key, [item])


class XdistController:
    """The xdist controller's hooks: the header note on batching, and what each worker is handed."""

    def __init__(self, config: pytest.Config, live_or_judged: bool, graph_store: Callable[[], str | None]):
        self.config = config
        self.live_or_judged = live_or_judged
        self.graph_store = graph_store

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        """Say so when xdist's distribution mode lets a worker have only two questions in flight."""
        return batching_note(dist_mode(config)) if self.live_or_judged else None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker the distribution mode, which decides its batches, and the shared graph."""
        node.workerinput[WORKERINPUT_KEY] = dist_mode(self.config)
        store = self.graph_store()
        if store is not None:
            node.workerinput[GRAPH_STORE_KEY] = store


@dataclass(frozen=True)
class CorpusFileShipment:
    """One corpus file a worker collected: its identity record (for shard merges) and its gates."""

    record: JsonMapping
    gates: tuple[Gate, ...]


@dataclass
class WorkerShipment:
    """Everything a worker's end of the run hands to the controller."""

    corpus_files: dict[Path, CorpusFileShipment] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    judge_stats: JsonObject | None = None

    def to_wire(self) -> JsonObject:
        return {
            "corpus_files": {
                str(path): {"record": dict(file.record), "gates": [dataclasses.asdict(g) for g in file.gates]}
                for path, file in self.corpus_files.items()
            },
            "warnings": list(self.warnings),
            "judge_stats": self.judge_stats,
        }

    @classmethod
    def from_wire(cls, wire: JsonMapping, known: Collection[Path] = ()) -> WorkerShipment:
        """The shipment; corpus files in `known` (already received from another worker) are skipped,
        so the controller builds each file's gates once, not once per worker."""
        return cls(
            {
                Path(path): CorpusFileShipment(file["record"], tuple(Gate(**gate) for gate in file["gates"]))
                for path, file in wire.get("corpus_files", {}).items()
                if Path(path) not in known
            },
            list(wire.get("warnings", [])),
            wire.get("judge_stats"),
        )


def ship_shipment(config: pytest.Config, shipment: WorkerShipment) -> None:
    """Worker: hand the shipment to xdist, which sends it when the worker goes down."""
    config.workeroutput[SHIPMENT_KEY] = shipment.to_wire()  # type: ignore[attr-defined]


def received_shipment(node: object, known: Collection[Path] = ()) -> WorkerShipment | None:
    """Controller: a finished worker's shipment (None when the worker died before sending one),
    without the corpus files in `known`, already received from another worker."""
    output = getattr(node, "workeroutput", None) or {}
    wire = output.get(SHIPMENT_KEY)
    return WorkerShipment.from_wire(wire, known) if wire is not None else None


def put_on_report(
    report: pytest.TestReport,
    order: Sequence[Any],
    result: JsonObject | None,
    responses: JsonObject | None,
    *,
    as_text: bool,
) -> None:
    """Attach one question's order, result and recorded responses to its report (as JSON text when
    the report travels to a controller)."""
    setattr(report, ORDER_ATTR, list(order))
    if result is not None:
        setattr(report, RESULT_ATTR, _as_json_text(result) if as_text else result)
    if responses:
        setattr(report, RESPONSE_ATTR, _as_json_text(responses) if as_text else responses)


@dataclass(frozen=True)
class ReportedQuestion:
    """What one question's report carried, read back."""

    order: Order | None
    result: JsonObject | None
    responses: JsonObject | None


def taken_from_report(report: pytest.TestReport) -> ReportedQuestion:
    order = getattr(report, ORDER_ATTR, None)
    return ReportedQuestion(
        tuple(order) if order is not None else None,
        _from_json_text(getattr(report, RESULT_ATTR, None)),
        _from_json_text(getattr(report, RESPONSE_ATTR, None)),
    )


def _as_json_text(value: JsonMapping) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _from_json_text(value: object) -> JsonObject | None:
    if isinstance(value, str):
        loaded: JsonObject = json_text.loads(value)
        return loaded
    return value if isinstance(value, dict) else None
