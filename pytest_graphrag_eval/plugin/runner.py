"""Background evaluation of questions while pytest reports items one by one.

pytest runs items sequentially, but answering and judging questions is I/O
bound. The runner owns an event loop on a daemon thread: the plugin submits
every question it will run up front, the agent and the judge work on them
concurrently (each bounded by its own limit), and an item only waits for its
own question's outcome.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.errors import GraphragEvalError, InputError
from pytest_graphrag_eval.evaluation import evaluate_question
from pytest_graphrag_eval.scoring import Scorer, ScoringContext

AgentCall = Callable[[Question], Any]


@dataclass(frozen=True)
class QuestionOutcome:
    """What one question produced: the scored result, the raw response, or a usage problem."""

    result: dict[str, Any] | None
    response: dict[str, Any] | None
    problem: str | None = None


class ReplaySource:
    """Responses recorded earlier, keyed by question id."""

    live = False

    def __init__(self, responses: Mapping[str, Mapping[str, Any]]):
        self._responses = responses

    async def get(self, question: Question) -> dict[str, Any] | None:
        response = self._responses.get(question.question_id)
        return dict(response) if response is not None else None


class LiveSource:
    """Calls the user's agent hook, sync (in threads) or async, at most `concurrency` at once."""

    live = True

    def __init__(self, agent: AgentCall, concurrency: int):
        self._agent = agent
        self._concurrency = concurrency
        self._semaphore: asyncio.Semaphore | None = None

    async def get(self, question: Question) -> Any:
        """The agent's response as it returned it (`evaluate_question` validates its shape)."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self._concurrency)
        async with self._semaphore:
            started = time.perf_counter()
            try:
                response = await asyncio.to_thread(self._agent, question)
                if inspect.isawaitable(response):
                    response = await response
            except Exception as error:
                return {"status": "error", "error": f"the agent hook raised {type(error).__name__}: {error}"}
            if response is None:
                return None
            if isinstance(response, Mapping):
                response = dict(response)
                if response.get("status") != "error":
                    response.setdefault("elapsed_sec", time.perf_counter() - started)
                response.setdefault("question_id", question.question_id)
            return response


class QuestionRunner:
    """Answers and scores submitted questions on a private event loop thread."""

    def __init__(
        self,
        source: ReplaySource | LiveSource,
        scorers: Sequence[Scorer],
        context_for: Callable[[Question], ScoringContext],
        on_close: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ):
        self._source = source
        self._scorers = list(scorers)
        self._context_for = context_for
        self._on_close = on_close
        self._futures: dict[str, concurrent.futures.Future[QuestionOutcome]] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="graphrag-eval", daemon=True)
        self._thread.start()

    @property
    def live(self) -> bool:
        return self._source.live

    def submit(self, questions: Iterable[Question]) -> None:
        """Start answering and scoring these questions, unless already started."""
        with self._lock:
            for question in questions:
                if question.question_id not in self._futures:
                    self._futures[question.question_id] = asyncio.run_coroutine_threadsafe(
                        self._evaluate(question), self._loop
                    )

    def outcome(self, question: Question) -> QuestionOutcome:
        """Block until this question is done (submitting it if needed)."""
        self.submit([question])
        return self._futures[question.question_id].result()

    async def _evaluate(self, question: Question) -> QuestionOutcome:
        response = await self._source.get(question)
        try:
            result = await evaluate_question(question, response, self._scorers, self._context_for(question))
        except InputError as error:  # evaluate_question validates the response's shape
            return QuestionOutcome(None, None, f"the agent returned a malformed response: {error}")
        except GraphragEvalError as error:
            return QuestionOutcome(None, response, str(error))
        return QuestionOutcome(result, response)

    def close(self) -> None:
        """Cancel unfinished work, release the judge client and stop the loop thread."""
        with self._lock:
            for future in self._futures.values():
                future.cancel()
        if self._on_close is not None:
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(self._on_close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()
