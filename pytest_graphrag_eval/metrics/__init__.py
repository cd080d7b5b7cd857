"""Leaf metric functions: text overlap, ranking (IR) measures and their names."""
