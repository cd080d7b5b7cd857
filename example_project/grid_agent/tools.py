"""The agent's tools: entity lookup by name, SPARQL, and keyword retrieval.

They mirror the tools of a typical text-to-SPARQL agent: `autocomplete_search`
turns a name from the question into IRIs (ranked), `sparql_query` runs a query,
and `retrieval` finds substation descriptions (`rdfs:comment`) by keywords.
Each returns the text a tool call would hand back to the model.
"""

from __future__ import annotations

import json
import re

import pyoxigraph

from .store import PREFIX_HEADER, QueryError, bindings, literal, select

SEARCHABLE_CLASSES = ("cim:Substation", "cim:SubGeographicalRegion", "cim:PowerTransformer", "cim:Line")
AUTOCOMPLETE_LIMIT = 5

STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "connect", "connects", "does", "for", "from", "has", "have", "host",
        "hosts", "in", "is", "of", "on", "serve", "serves", "substation", "substations", "supply",
        "supplies", "that", "the", "to", "which", "with",
    }
)  # fmt: skip


class GridTools:
    """Tool implementations over one store."""

    def __init__(self, store: pyoxigraph.Store) -> None:
        self.store = store

    def autocomplete_search(self, query: str, result_class: str) -> str:
        """Resources of `result_class` whose name contains `query`, best match first.

        `rank` is the share of the name covered by the query (1.0 for an exact match).
        """
        if result_class not in SEARCHABLE_CLASSES:
            raise QueryError(f"cannot search class {result_class!r}")
        text = literal(query)
        return self.sparql_query(
            f"""{PREFIX_HEADER}SELECT ?iri ?name ?rank WHERE {{
  ?iri a {result_class} ;
       cim:IdentifiedObject.name ?name .
  FILTER(CONTAINS(LCASE(?name), LCASE({text})))
  BIND(xsd:float(STRLEN({text})) / xsd:float(STRLEN(?name)) AS ?rank)
}}
ORDER BY DESC(?rank) ?name
LIMIT {AUTOCOMPLETE_LIMIT}"""
        )

    def sparql_query(self, query: str) -> str:
        return select(self.store, query)

    def retrieval(self, query: str, k: int) -> str:
        """The `k` substation descriptions sharing most keywords with `query`, as a JSON list.

        Each document is `{"id": substation IRI, "text": description, "score": keywords matched}`;
        documents matching no keyword are left out.
        """
        keywords = set(keywords_of(query))
        rows = bindings(
            select(
                self.store,
                f"{PREFIX_HEADER}SELECT ?substation ?comment WHERE {{ "
                "?substation a cim:Substation ; rdfs:comment ?comment }",
            )
        )
        scored = [
            (len(keywords.intersection(keywords_of(row["comment"]))), row["substation"], row["comment"])
            for row in rows
        ]
        ranked = sorted((entry for entry in scored if entry[0] > 0), key=lambda entry: (-entry[0], entry[1]))
        documents = [{"id": iri, "text": comment, "score": score} for score, iri, comment in ranked[:k]]
        return json.dumps(documents, indent=2, ensure_ascii=False)


def keywords_of(text: str) -> list[str]:
    """Lower-cased words without stopwords, with a plural `s` removed ("farms" -> "farm")."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    return [
        word[:-1] if len(word) > 4 and word.endswith("s") else word for word in words if word not in STOPWORDS
    ]
