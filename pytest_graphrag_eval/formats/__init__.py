"""Leaf parsers of step outputs: SPARQL JSON results, RDF terms, retrieved-document lists."""
