"""The example project's offline GraphRAG agent over an RDF power grid."""

from .agent import GridAgent
from .regressed import RegressedGridAgent
from .store import load_store, shared_store

__all__ = ["GridAgent", "RegressedGridAgent", "load_store", "shared_store"]
