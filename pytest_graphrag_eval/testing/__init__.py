"""Test helpers shipped with the package: a loopback OpenAI-compatible server.

Used by this project's tests and benchmarks, and by users who want to test
their own LLM-judged suites offline.
"""

from pytest_graphrag_eval.testing.fake_openai import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    bag_of_words_embedding,
)

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "bag_of_words_embedding"]
