# conftest.py: an agent looping over OpenAI Chat Completions
# run_agent returns the messages list it sent and extended (its ChatCompletions may stand in)
from my_agent import run_agent

from pytest_graphrag_eval import from_openai_messages


def pytest_graphrag_respond(question, config):
    messages = run_agent(question.question_text)
    return from_openai_messages(messages)
