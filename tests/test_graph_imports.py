"""No import circle inside graph/: the endpoint interface knows none of its implementations, and
the factory that picks one is a module of its own (issue 28, item 5)."""

from __future__ import annotations

import grimp

PACKAGE = "pytest_graphrag_eval.graph"


def test_no_module_of_graph_imports_itself_back() -> None:
    graph = grimp.build_graph("pytest_graphrag_eval")
    modules = {module for module in graph.modules if module.startswith(PACKAGE + ".")}
    edges = {module: graph.find_modules_directly_imported_by(module) & modules for module in modules}
    circles = []
    for start in sorted(modules):
        pending, seen = list(edges[start]), set()
        while pending:
            module = pending.pop()
            if module == start:
                circles.append(start)
                break
            if module not in seen:
                seen.add(module)
                pending.extend(edges[module])
    assert circles == []
    assert edges[PACKAGE + ".endpoint"] == set()
