"""Which questions an xdist worker may start together: only those it will itself run, or a question
would be answered twice. That follows from the distribution mode the controller hands each worker;
under `load` and `worksteal` a worker can only start an item and the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

WORKERINPUT_KEY = "graphrag_dist"
GRAPH_STORE_KEY = "graphrag_graph_store"  # the controller's loaded graph, shared with its workers


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
