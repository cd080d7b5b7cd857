# conftest.py: an agent instrumented with OpenTelemetry (GenAI semantic conventions or OpenInference)
from my_agent import run_agent  # creates its spans with the global tracer provider
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from pytest_graphrag_eval import OtelRecorder

trace.set_tracer_provider(TracerProvider())  # leave out if your application sets one up already
recorder = OtelRecorder()


def pytest_graphrag_respond(question, config):
    return recorder.respond(question, lambda: run_agent(question.question_text))
