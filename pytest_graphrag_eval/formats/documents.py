"""Documents of a retrieval step: parsing and validation of its output (shape: docs/retrieval.md).

Problems raise ValueError naming the document, for a scorer to report as `<metric>_error`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_graphrag_eval.formats.json_types import JSONValue


@dataclass(frozen=True)
class Document:
    """One retrieved or reference document."""

    id: str
    text: str | None = None
    relevance: int | None = None


def parse_documents(output: object) -> list[Document]:
    """Validate a retrieval step output into documents, in the order given."""
    return [_document(item, index) for index, item in enumerate(_load_list(output))]


def parse_retrieved_ids(output: object) -> list[str]:
    """Document ids in rank order; a repeated id keeps its first (best) rank."""
    return list(dict.fromkeys(document.id for document in parse_documents(output)))


def parse_retrieved_documents(output: object) -> list[Document]:
    """Documents in rank order with their text; a repeated id keeps its first rank, and a document
    without text is an error, as eRAG cannot show it to the generator."""
    documents: dict[str, Document] = {}
    for index, document in enumerate(parse_documents(output)):
        if document.text is None:
            raise ValueError(f"document #{index + 1} (id {document.id!r}) has no 'text'")
        documents.setdefault(document.id, document)
    return list(documents.values())


def parse_relevance(output: object) -> dict[str, int]:
    """Reference judgements `{id: relevance}`; relevance defaults to 1 (relevant)."""
    judgements: dict[str, int] = {}
    for document in parse_documents(output):
        relevance = 1 if document.relevance is None else document.relevance
        if judgements.get(document.id, relevance) != relevance:
            raise ValueError(f"document id {document.id!r} is listed twice with different relevance")
        judgements[document.id] = relevance
    return judgements


def _load_list(output: object) -> list[JSONValue]:
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except ValueError as error:
            raise ValueError(f"retrieval output is not valid JSON: {error}") from None
    if not isinstance(output, list):
        raise ValueError(
            f"retrieval output must be a JSON list of documents with 'id', got {type(output).__name__}"
        )
    return output


def _document(item: JSONValue, index: int) -> Document:
    where = f"document #{index + 1}"
    if _is_id(item):
        return Document(id=str(item))
    if not isinstance(item, Mapping):
        raise ValueError(f"{where} must be an object with 'id' (or a bare id), got {type(item).__name__}")
    if "id" not in item:
        raise ValueError(f"{where} has no 'id'")
    if not _is_id(item["id"]):
        raise ValueError(f"{where}: 'id' must be non-empty text or an integer, got {item['id']!r}")
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where}: 'text' must be text, got {type(text).__name__}")
    relevance = item.get("relevance")
    if relevance is not None and (isinstance(relevance, bool) or not isinstance(relevance, int)):
        raise ValueError(f"{where}: 'relevance' must be an integer, got {relevance!r}")
    return Document(id=str(item["id"]), text=text, relevance=relevance)


def _is_id(value: object) -> bool:
    return (isinstance(value, str) and value != "") or (
        isinstance(value, int) and not isinstance(value, bool)
    )
