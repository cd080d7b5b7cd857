"""Test helpers shipped with the package: a loopback OpenAI-compatible server, for offline tests."""

from pytest_graphrag_eval.testing.fake_openai import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    bag_of_words_embedding,
)

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "bag_of_words_embedding"]
