"""Spans from the OpenTelemetry SDK and from OTLP/JSON, read into one plain record.

Ids are kept as text as each source writes them (SDK integers as hex); they are only compared
within one file.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

ERROR_STATUS_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")


@dataclass(frozen=True)
class SpanRecord:
    """One span's facts the adapters use."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    attributes: Mapping[str, object]
    failed: bool
    status_message: str | None
    events: tuple[tuple[str, Mapping[str, object]], ...]
    service: str | None
    line: int | None = None  # where an OTLP/JSON file holds it

    def describe(self) -> str:
        return f"span {self.name!r} (span id {self.span_id}, trace id {self.trace_id})"


def sdk_span_record(span: Any) -> SpanRecord:
    """A `ReadableSpan` of opentelemetry-sdk (read by attribute, without importing the SDK)."""
    status = span.status
    resource_attributes = getattr(getattr(span, "resource", None), "attributes", None) or {}
    return SpanRecord(
        trace_id=format(span.context.trace_id, "032x"),
        span_id=format(span.context.span_id, "016x"),
        parent_id=format(span.parent.span_id, "016x") if span.parent is not None else None,
        name=str(span.name),
        start_ns=span.start_time,
        end_ns=span.end_time,
        attributes=dict(span.attributes or {}),
        failed=getattr(getattr(status, "status_code", None), "name", None) == "ERROR",
        status_message=getattr(status, "description", None),
        events=tuple((str(event.name), dict(event.attributes or {})) for event in span.events or ()),
        service=_text_or_none(resource_attributes.get("service.name")),
    )


def otlp_span_records(document: object, location: SourceLocation) -> list[SpanRecord]:
    """The spans of one OTLP/JSON `ExportTraceServiceRequest` (`{"resourceSpans": [...]}`)."""
    if not isinstance(document, Mapping):
        raise ResponseError(
            "an OTLP/JSON trace export must be an object with a resourceSpans list, "
            f"got {kind_name(document)}",
            location,
            "resourceSpans",
        )
    if "resourceSpans" not in document:
        keys = ", ".join(sorted(str(key) for key in document)[:5]) or "none"
        raise ResponseError(
            f"is missing: an OTLP/JSON trace export is an object with a resourceSpans list (this one has the "
            f"keys {keys}; is it a recorded responses file? then leave out --graphrag-responses-format otlp)",
            location,
            "resourceSpans",
        )
    if not is_sequence(document["resourceSpans"]):
        raise ResponseError(
            f"must be a list of resource spans, got {kind_name(document['resourceSpans'])}",
            location,
            "resourceSpans",
        )
    records = []
    for resource_index, resource_spans in enumerate(document["resourceSpans"]):
        where = f"resourceSpans[{resource_index}]"
        resource_attributes = otlp_attributes(field(field(resource_spans, "resource", {}), "attributes", []))
        service = _text_or_none(resource_attributes.get("service.name"))
        for scope_index, scope_spans in enumerate(field(resource_spans, "scopeSpans", [])):
            for span_index, span in enumerate(field(scope_spans, "spans", [])):
                span_where = f"{where}.scopeSpans[{scope_index}].spans[{span_index}]"
                records.append(_otlp_span(span, service, location, span_where))
    return records


def _otlp_span(span: Any, service: str | None, location: SourceLocation, where: str) -> SpanRecord:
    if not isinstance(span, Mapping):
        raise ResponseError(f"a span must be an object, got {kind_name(span)}", location, where)
    trace_id, span_id = span.get("traceId"), span.get("spanId")
    if not isinstance(trace_id, str) or not trace_id or not isinstance(span_id, str) or not span_id:
        raise ResponseError("a span needs traceId and spanId", location, f"{where}.traceId")
    status = span.get("status") or {}
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=span.get("parentSpanId") or None,
        name=str(span.get("name", "")),
        start_ns=_nanoseconds(span.get("startTimeUnixNano")),
        end_ns=_nanoseconds(span.get("endTimeUnixNano")),
        attributes=otlp_attributes(span.get("attributes", [])),
        failed=status.get("code") in ERROR_STATUS_CODES,
        status_message=status.get("message") or None,
        events=tuple(
            (str(field(event, "name", "")), otlp_attributes(field(event, "attributes", [])))
            for event in span.get("events") or []
        ),
        service=service,
        line=location.line,
    )


def otlp_attributes(pairs: Any) -> dict[str, object]:
    """OTLP/JSON `[{"key", "value": AnyValue}]` as a plain dict."""
    if not is_sequence(pairs):
        return {}
    return {str(pair.get("key")): any_value(pair.get("value")) for pair in pairs if isinstance(pair, Mapping)}


def any_value(value: object) -> object:
    """An OTLP/JSON AnyValue as a Python value (int64 may be written as text); None if malformed."""
    try:
        return _any_value(value)
    except (TypeError, ValueError, AttributeError):  # binascii.Error is a ValueError
        return None


def _any_value(value: object) -> object:
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_any_value(item) for item in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return otlp_attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return base64.b64decode(value["bytesValue"])
    return None


def _nanoseconds(value: object) -> int | None:
    if not isinstance(value, int | float | str):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
