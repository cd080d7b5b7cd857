# conftest.py: a LangGraph (or LangChain) agent
from my_agent import graph  # a compiled graph whose state has `messages`

from pytest_graphrag_eval import from_langchain_messages


async def pytest_graphrag_respond(question, config):
    state = await graph.ainvoke({"messages": [("user", question.question_text)]})
    return from_langchain_messages(state["messages"])
