"""The knowledge graph in the loop: SPARQL endpoints, read-only query checks, reference outputs checked
against (and refreshed from) the live graph, agent queries re-executed. pyoxigraph is imported lazily."""
