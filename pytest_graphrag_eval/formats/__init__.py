"""Leaf helpers below every layer: parsers of step outputs (SPARQL JSON results, RDF terms, retrieved-document
lists), JSON text and copies, atomic file writes, pausing the garbage collector."""
