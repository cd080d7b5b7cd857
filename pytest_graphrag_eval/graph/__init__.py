"""The knowledge graph in the loop: SPARQL endpoints (embedded or remote), read-only query checks,
reference outputs checked against (and refreshed from) the live graph, and recorded agent queries
re-executed on it.

pyoxigraph (the `[graph]` extra) parses every query and holds the embedded store; it is imported
only when an endpoint is opened.
"""
