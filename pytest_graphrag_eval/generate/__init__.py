"""A reference corpus generated from templates over a knowledge graph, verified by execution."""
