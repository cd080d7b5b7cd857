"""Results as the text a corpus stores, the same whichever engine produced them (pyoxigraph's JSON;
canonical, sorted N-Triples), so a refreshed reference changes only when the results do."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.graph.readonly import import_pyoxigraph

# One encoder for the results whose text holds an escape: `json.dumps`'s output with
# `ensure_ascii=False`, without building an encoder per call nor tracking containers for cycles.
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)
_OUTSIDE = "\0"  # joins the texts between strings, which hold only `{}[],:` and `true`/`false`


def solutions_json(results: Any) -> str:
    """SELECT solutions or an ASK boolean as SPARQL results JSON text, exactly
    `json.dumps(json.loads(pyoxigraph's JSON), ensure_ascii=False)`: the spaced style corpora use."""
    pyoxigraph = import_pyoxigraph()
    text = results.serialize(format=pyoxigraph.QueryResultsFormat.JSON).decode("utf-8")
    if "\\" in text:
        return _ENCODER.encode(json_text.loads(text))
    return _spaced(text)


def _spaced(compact: str) -> str:
    """pyoxigraph's compact JSON with a space after each separating `,` and `:`, without a parse and
    rewrite: with no backslash, every `"` opens or closes a string."""
    pieces = compact.split('"')
    pieces[::2] = _OUTSIDE.join(pieces[::2]).replace(",", ", ").replace(":", ": ").split(_OUTSIDE)
    return '"'.join(pieces)


def canonical_ntriples(triples: Iterable[Any]) -> str:
    """Triples (or quads, graph names dropped) as sorted canonical N-Triples, one per line."""
    pyoxigraph = import_pyoxigraph()
    dataset = pyoxigraph.Dataset(
        pyoxigraph.Quad(triple.subject, triple.predicate, triple.object) for triple in triples
    )
    dataset.canonicalize(pyoxigraph.CanonicalizationAlgorithm.UNSTABLE)
    return "".join(f"{line} .\n" for line in sorted(str(quad) for quad in dataset))
