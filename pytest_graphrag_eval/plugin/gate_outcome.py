"""Make a failed suite gate impossible to miss at the end of the output.

A run whose questions all pass but whose gate fails exits with status 1, yet
pytest's last line would still read a green "N passed". The failed gates are
repeated as the last lines of the plugin's summary and counted in pytest's
final line ("3 passed, 1 gate failed"), which pytest then no longer shows green.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_graphrag_eval.gates.model import GateResult


def failed_gates_key(count: int) -> str:
    """The word pytest's final line shows after the count: `1 gate failed`, `2 gates failed`."""
    return "gate failed" if count == 1 else "gates failed"


def announce_failed_gates(terminalreporter: Any, gates: Sequence[GateResult]) -> None:
    """Print the failed gates last and count them in pytest's final summary line."""
    failed = [gate for gate in gates if not gate.passed]
    if not failed:
        return
    terminalreporter.write_line("")
    terminalreporter.write_line(
        f"graphrag-eval: {len(failed)} suite gate(s) FAILED, so this run fails:", red=True, bold=True
    )
    for gate in failed:
        terminalreporter.write_line(f"  FAIL  {gate.message}", red=True)
    # Any key in `stats` shows up in the final line; these entries are not test reports.
    terminalreporter.stats.setdefault(failed_gates_key(len(failed)), []).extend(failed)
