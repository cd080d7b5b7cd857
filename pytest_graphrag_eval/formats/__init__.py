"""Leaf helpers below every layer: parsers of step outputs (SPARQL JSON results, RDF terms, retrieved-document
lists), JSON text and copies, atomic file writes, text made safe for a terminal."""
