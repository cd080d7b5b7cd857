"""OpenTelemetry traces of an agent run to a response dict (GenAI and OpenInference conventions).

Spans from the OpenTelemetry SDK and from OTLP/JSON are read into one plain record first; ids are kept as
text as each source writes them (SDK integers as hex), only compared within one file. Tokens are summed
over the usage-reporting spans with no usage-reporting descendant, so an agent span repeating its model
calls' totals is not counted twice; a failed root span is an error response. `OtelRecorder` records each
question's run for a live `pytest_graphrag_respond` hook: each call runs in a root span carrying the
question id and only that trace's spans are kept, so concurrent questions never mix; opentelemetry-sdk is
imported only when a recorder is made.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.adapters.tool_calls import NO_RESULT, parse_arguments, response_dict, tool_error
from pytest_graphrag_eval.errors import (
    ConfigurationError,
    ResponseError,
    SourceLocation,
    install_extra_hint,
    json_problem,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

# The span attribute naming the corpus question a trace answers (set by `OtelRecorder`).
QUESTION_ID_ATTRIBUTE = "graphrag.question_id"
ROOT_SPAN_NAME = "graphrag.question"

OPERATION = "gen_ai.operation.name"
SPAN_KIND = "openinference.span.kind"
USAGE_NAMES = {
    "input_tokens": ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
    "output_tokens": ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
    "total_tokens": ("llm.token_count.total",),
}
OPENINFERENCE_MESSAGE = re.compile(r"^llm\.output_messages\.(\d{1,9})\.message\.(role|content)$")
ERROR_STATUS_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")


def from_otel_spans(spans: object, *, location: SourceLocation | None = None) -> dict[str, Any]:
    """The response dict for one trace's spans (SDK `ReadableSpan`s or OTLP/JSON dicts); several traces are
    an error: pass one, or use `from_otlp_json`."""
    location = location or SourceLocation()
    traces = group_traces(span_records(spans, location))
    if len(traces) != 1:
        raise ResponseError(
            f"spans of {len(traces)} traces given; one agent run is one trace", location, "spans"
        )
    return trace_response(next(iter(traces.values())), location)


def from_otlp_json(
    data: object, *, question_attribute: str = QUESTION_ID_ATTRIBUTE, location: SourceLocation | None = None
) -> dict[str, dict[str, Any]]:
    """Responses of an OTLP/JSON export (a document or JSON lines), one per trace, keyed by the
    `question_attribute` span attribute, else by the question text of its first user input."""
    location = location or SourceLocation()
    documents = [(location.line, data)] if not isinstance(data, str) else otlp_documents(data, location)
    records = [
        record
        for line, document in documents
        for record in otlp_span_records(document, SourceLocation(location.file, line))
    ]
    responses: dict[str, dict[str, Any]] = {}
    for spans in group_traces(records).values():
        key, response = keyed_trace_response(spans, question_attribute, location)
        if key in responses:
            raise ResponseError(f"two traces answer {key!r}", _at(spans, location), question_attribute)
        responses[key] = response
    return responses


def otlp_documents(text: str, location: SourceLocation) -> Sequence[tuple[int | None, object]]:
    """The JSON documents of an OTLP/JSON file: the whole text, or one per line."""
    try:
        return [(None, json.loads(text))]
    except ValueError:
        return list(json_lines(text, location.file))
    except RecursionError:
        raise ResponseError("invalid JSON: nested too deeply", location) from None


def json_lines(text: str, file: str | None) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line; a line that is not JSON is a ResponseError."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except (ValueError, RecursionError) as error:
                raise ResponseError(
                    f"invalid JSON line: {json_problem(error)}", SourceLocation(file, number)
                ) from None


def span_records(spans: Any, location: SourceLocation) -> list[SpanRecord]:
    """SDK spans or OTLP/JSON span dicts (or a whole OTLP/JSON document) as `SpanRecord`s."""
    if isinstance(spans, Mapping) and "resourceSpans" in spans:
        return otlp_span_records(spans, location)
    if not is_sequence(spans):
        raise ResponseError(f"must be a list of spans, got {kind_name(spans)}", location, "spans")
    records = []
    for index, span in enumerate(spans):
        if isinstance(span, SpanRecord):
            records.append(span)
        elif isinstance(span, Mapping):
            records.extend(
                otlp_span_records({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, location)
            )
        elif hasattr(span, "context") and hasattr(span, "attributes"):
            records.append(sdk_span_record(span))
        else:
            raise ResponseError(f"is not a span: got {kind_name(span)}", location, f"spans[{index}]")
    return records


def group_traces(records: Iterable[SpanRecord]) -> dict[str, list[SpanRecord]]:
    """Spans by trace id, each trace's spans in start order, traces in order of first appearance."""
    traces: dict[str, list[SpanRecord]] = {}
    for record in records:
        traces.setdefault(record.trace_id, []).append(record)
    return {
        trace_id: sorted(spans, key=lambda span: (span.start_ns or 0, span.end_ns or 0))
        for trace_id, spans in traces.items()
    }


def keyed_trace_response(
    spans: list[SpanRecord], question_attribute: str, location: SourceLocation
) -> tuple[str, dict[str, Any]]:
    """One trace's response and the key to match it to a question: the id attribute, else the question."""
    where = _at(spans, location)
    response = trace_response(spans, where)
    question_id = next(
        (span.attributes[question_attribute] for span in spans if question_attribute in span.attributes), None
    )
    if question_id is not None:
        return str(question_id), response
    question_text = _question_text(spans)
    if question_text is None:
        raise ResponseError(
            f"trace {spans[0].trace_id} names no question: none of its spans has the "
            f"{question_attribute!r} attribute and none holds the user's input text",
            where,
            question_attribute,
        )
    return question_text, response


def trace_response(spans: list[SpanRecord], location: SourceLocation) -> dict[str, Any]:
    """The response dict of one trace's spans; a failed root span is the agent's error response."""
    span_ids = {span.span_id for span in spans}
    root = next((span for span in spans if span.failed and span.parent_id not in span_ids), None)
    if root is not None:
        return {
            "status": "error",
            "error": root.status_message or _exception_message(root) or "the agent failed",
        }
    tool_spans = [span for span in spans if _is_tool_span(span)]
    answer = _answer(spans)
    usage = _usage(spans)
    if not tool_spans and answer is None and not usage:
        services = sorted({span.service for span in spans if span.service})
        service = f" from service {', '.join(services)}" if services else ""
        raise ResponseError(
            f"trace {spans[0].trace_id}{service} has no GenAI or OpenInference spans (no tool call, "
            f"model call or answer): not an agent trace",
            location,
            "spans",
        )
    steps = [_tool_step(span, location) for span in tool_spans]
    starts = [span.start_ns for span in spans if span.start_ns is not None]
    ends = [span.end_ns for span in spans if span.end_ns is not None]
    elapsed = (max(ends) - min(starts)) / 1e9 if starts and ends and max(ends) >= min(starts) else None
    return response_dict(steps, answer, usage, elapsed, location, "spans")


def _is_tool_span(span: SpanRecord) -> bool:
    return span.attributes.get(OPERATION) == "execute_tool" or span.attributes.get(SPAN_KIND) == "TOOL"


def _tool_step(span: SpanRecord, location: SourceLocation) -> dict[str, object]:
    attributes = span.attributes
    genai = attributes.get(OPERATION) == "execute_tool"
    name_key = "gen_ai.tool.name" if genai else "tool.name"
    name = attributes.get(name_key)
    if not isinstance(name, str) or not name:
        raise ResponseError(f"{span.describe()} is a tool call without a tool name", location, name_key)
    call_id = attributes.get("gen_ai.tool.call.id" if genai else "tool_call.id") or span.span_id
    arguments = attributes.get("gen_ai.tool.call.arguments" if genai else "input.value")
    output = attributes.get("gen_ai.tool.call.result" if genai else "output.value")
    step: dict[str, object] = {"name": name, "args": parse_arguments(arguments), "id": str(call_id)}
    if span.failed:
        step.update(status="error", error=tool_error(span.status_message or _exception_message(span)))
        if output is not None:
            step["output"] = output
    elif output is None:
        step.update(status="error", error=NO_RESULT)
    else:
        step.update(status="success", output=output)
    return step


def _exception_message(span: SpanRecord) -> str | None:
    for name, attributes in span.events:
        if name == "exception":
            message = attributes.get("exception.message") or attributes.get("exception.type")
            if isinstance(message, str):
                return message
    error_type = span.attributes.get("error.type")
    return error_type if isinstance(error_type, str) else None


def _answer(spans: list[SpanRecord]) -> str | None:
    """The assistant text of the span that ended last among those carrying one."""
    answer, answered_at = None, -1
    for span in spans:
        text = _span_answer(span)
        if text is not None and (span.end_ns or 0) >= answered_at:
            answer, answered_at = text, span.end_ns or 0
    return answer


def _span_answer(span: SpanRecord) -> str | None:
    attributes = span.attributes
    messages = attributes.get("gen_ai.output.messages")
    if isinstance(messages, str):
        texts = _message_texts(messages, "assistant")
        return texts[-1] if texts else None
    if attributes.get(SPAN_KIND) == "LLM":
        contents: dict[int, dict[str, Any]] = {}
        for key, value in attributes.items():
            if match := OPENINFERENCE_MESSAGE.match(key):
                contents.setdefault(int(match.group(1)), {})[match.group(2)] = value
        texts = [
            message["content"]
            for _, message in sorted(contents.items())
            if message.get("role") == "assistant" and isinstance(message.get("content"), str)
        ]
        return texts[-1] if texts else None
    if (
        attributes.get(SPAN_KIND) in ("AGENT", "CHAIN")
        and attributes.get("output.mime_type") != "application/json"
    ):
        output = attributes.get("output.value")
        return output if isinstance(output, str) else None
    return None


def _message_texts(messages: str, role: str) -> list[str]:
    """The text of each `role` message (its text parts joined) of a `gen_ai.*.messages` attribute."""
    try:
        parsed = json.loads(messages)
    except (ValueError, RecursionError):
        return []
    texts = []
    for message in parsed if isinstance(parsed, list) else []:
        if field(message, "role") != role:
            continue
        parts = [
            part["content"]
            for part in field(message, "parts", [])
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("content"), str)
        ]
        if parts:
            texts.append("".join(parts))
    return texts


def _usage(spans: list[SpanRecord]) -> dict[str, int]:
    """Token counts of the spans reporting usage with no descendant that also does."""
    reporting = {span.span_id for span in spans if _reports_usage(span)}
    parents = {span.span_id: span.parent_id for span in spans}
    has_reporting_descendant: set[str] = set()
    for span_id in reporting:
        parent, seen = parents.get(span_id), {span_id}
        while parent is not None and parent not in seen:
            has_reporting_descendant.add(parent)
            seen.add(parent)
            parent = parents.get(parent)
    totals: dict[str, int] = {}
    for span in spans:
        if span.span_id not in reporting or span.span_id in has_reporting_descendant:
            continue
        for target, names in USAGE_NAMES.items():
            value = next((span.attributes[name] for name in names if name in span.attributes), None)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[target] = totals.get(target, 0) + value
    return totals


def _reports_usage(span: SpanRecord) -> bool:
    return any(name in span.attributes for names in USAGE_NAMES.values() for name in names)


def _question_text(spans: list[SpanRecord]) -> str | None:
    """The first user text a trace received: GenAI input messages, or an agent/chain span's input."""
    for span in spans:
        messages = span.attributes.get("gen_ai.input.messages")
        if isinstance(messages, str):
            texts = _message_texts(messages, "user")
            if texts:
                return texts[0]
        if span.attributes.get(SPAN_KIND) in ("AGENT", "CHAIN") and span.parent_id is None:
            value = span.attributes.get("input.value")
            if isinstance(value, str):
                return value
    return None


def _at(spans: list[SpanRecord], location: SourceLocation) -> SourceLocation:
    lines = [span.line for span in spans if span.line is not None]
    return SourceLocation(location.file, min(lines) if lines else location.line)


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
    return base64.b64decode(value["bytesValue"]) if "bytesValue" in value else None


def _nanoseconds(value: object) -> int | None:
    if not isinstance(value, int | float | str):
        return None
    try:
        return int(value)
    except (ValueError, OverflowError):  # not a number; infinite, or a text of over 4,300 digits
        return None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


class AskedQuestion(Protocol):
    """What the recorder reads of the question asked (a corpus `Question` is one)."""

    @property
    def question_id(self) -> str: ...


class OtelRecorder:
    """Turns the spans an agent call emits into the call's response dict."""

    def __init__(self, tracer_provider: object = None) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:
            raise ConfigurationError(
                f"OtelRecorder needs opentelemetry-sdk: {install_extra_hint('traces')}"
            ) from None
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            raise ConfigurationError(
                "OtelRecorder needs an opentelemetry-sdk TracerProvider (set one with "
                f"trace.set_tracer_provider, or pass it), got {type(provider).__name__}"
            )
        self._finished: dict[int, list[SpanRecord]] = {}
        self._recording: set[int] = set()
        self._lock = threading.Lock()
        provider.add_span_processor(_processor(self._on_end))
        self._tracer = provider.get_tracer(__name__)

    def _on_end(self, span: ReadableSpan) -> None:
        trace_id = span.context.trace_id
        with self._lock:
            if trace_id in self._recording:
                self._finished.setdefault(trace_id, []).append(sdk_span_record(span))

    @contextmanager
    def _question_trace(self, question: AskedQuestion) -> Iterator[list[SpanRecord]]:
        """Run the block in a new trace for `question`; the list holds its spans afterwards."""
        spans: list[SpanRecord] = []
        attributes = {QUESTION_ID_ATTRIBUTE: str(question.question_id)}
        from opentelemetry import context

        token = context.attach(context.Context())  # a new trace, whatever span is current
        trace_id = 0  # no trace yet (a valid trace id is never 0)
        try:
            with self._tracer.start_as_current_span(ROOT_SPAN_NAME, attributes=attributes) as root:
                trace_id = root.get_span_context().trace_id
                with self._lock:
                    self._recording.add(trace_id)
                yield spans
        finally:
            context.detach(token)
            with self._lock:
                self._recording.discard(trace_id)
                spans.extend(self._finished.pop(trace_id, []))

    def respond(self, question: AskedQuestion, agent_call: Callable[[], object]) -> dict[str, Any]:
        """Call the agent for `question` and return the response its spans tell."""
        with self._question_trace(question) as spans:
            agent_call()
        return from_otel_spans(spans)

    async def arespond(
        self, question: AskedQuestion, agent_call: Callable[[], Awaitable[object]]
    ) -> dict[str, Any]:
        """`respond` for an async agent."""
        with self._question_trace(question) as spans:
            await agent_call()
        return from_otel_spans(spans)


def _processor(on_end: Callable[[ReadableSpan], None]) -> SpanProcessor:
    """A span processor handing every ended span to `on_end`."""
    from opentelemetry.sdk.trace import SpanProcessor

    class _Forward(SpanProcessor):
        def on_end(self, span: ReadableSpan) -> None:
            on_end(span)

    return _Forward()
