"""What an xdist worker ships to its controller, converted here and nowhere else: execnet carries
plain values only, and a question's result travels as one JSON text (execnet serialises nested dicts
object by object in Python, a string at once)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.json_types import JsonMapping, JsonObject, Order
from pytest_graphrag_eval.gates.model import Gate

SHIPMENT_KEY = "graphrag_shipment"
RESULT_ATTR = "graphrag_result"
ORDER_ATTR = "graphrag_order"
RESPONSE_ATTR = "graphrag_response"


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
