# conftest.py: an agent on the OpenAI Responses API
# run_agent returns the items it sent and received (its Response objects may stand in)
from my_agent import run_agent

from pytest_graphrag_eval import from_openai_responses


def pytest_graphrag_respond(question, config):
    items = run_agent(question.question_text)
    return from_openai_responses(items)
