"""Results as the text a corpus stores, the same whichever engine produced them (pyoxigraph's JSON;
canonical, sorted N-Triples), so a refreshed reference changes only when the results do."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.graph.readonly import import_pyoxigraph

try:
    import msgspec
except ImportError:  # the standard library alone
    msgspec = None  # type: ignore[assignment]


def solutions_json(results: Any) -> str:
    """SELECT solutions or an ASK boolean as SPARQL results JSON text, exactly
    `json.dumps(json.loads(pyoxigraph's JSON), ensure_ascii=False)`: the spaced style corpora use.
    msgspec's formatter (`speed` extra) spaces the compact text in one pass, strings copied as written."""
    pyoxigraph = import_pyoxigraph()
    data: bytes = results.serialize(format=pyoxigraph.QueryResultsFormat.JSON)
    if msgspec is not None:
        return msgspec.json.format(data, indent=0).decode("utf-8")
    return json.dumps(json_text.loads(data.decode("utf-8")), ensure_ascii=False)


def canonical_ntriples(triples: Iterable[Any]) -> str:
    """Triples (or quads, graph names dropped) as sorted canonical N-Triples, one per line."""
    pyoxigraph = import_pyoxigraph()
    dataset = pyoxigraph.Dataset(
        pyoxigraph.Quad(triple.subject, triple.predicate, triple.object) for triple in triples
    )
    dataset.canonicalize(pyoxigraph.CanonicalizationAlgorithm.UNSTABLE)
    return "".join(f"{line} .\n" for line in sorted(str(quad) for quad in dataset))
