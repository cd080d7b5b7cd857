"""Recording the spans of each question's agent run, for a live `pytest_graphrag_respond` hook.

Each call runs in a root span carrying the question id and only that trace's spans are kept, so
concurrent questions never mix; opentelemetry-sdk is imported only when a recorder is made.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from pytest_graphrag_eval.adapters.otel import (
    QUESTION_ID_ATTRIBUTE,
    SpanRecord,
    from_otel_spans,
    sdk_span_record,
)
from pytest_graphrag_eval.errors import ConfigurationError, install_extra_hint

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

ROOT_SPAN_NAME = "graphrag.question"


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
