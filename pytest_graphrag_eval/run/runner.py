"""Answering and scoring questions while pytest reports items one by one: concurrently on a background
event loop when there is I/O to wait on (an agent, a judge), else inline on the item's thread.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord, normalise_response
from pytest_graphrag_eval.errors import GraphragEvalError, InputError, SourceLocation
from pytest_graphrag_eval.evaluation import base_result, evaluate_question
from pytest_graphrag_eval.scoring import Scorer, ScoringContext

AgentCall = Callable[[Question], Any]
Prepare = Callable[
    [Question, Mapping[str, Any] | None],
    tuple[Question, Mapping[str, Any] | None, dict[str, Any], str | None],
]
"""Work done on a question and its response before scoring (the graph stage): the question and
response to score, keys to add to the result, and the question's own error if any."""
T = TypeVar("T")
SIGNAL_CHECK_INTERVAL = 0.1
AGENT_HOOK = "agent hook pytest_graphrag_respond"


@dataclass(frozen=True)
class AnsweredQuestion:
    """What one question produced: the scored result, the raw response, or a usage problem."""

    result: dict[str, Any] | None
    response: ResponseRecord | None
    problem: str | None = None
    # With --graphrag-agent-repeats: every attempt's outcome, the first one also in the fields above.
    attempts: tuple[AnsweredQuestion, ...] = ()


class ResponseSource(Protocol):
    """Where a question's response comes from: a recording, the agent, or a dry run's stand-in."""

    live: bool

    def attempts(self, question: Question, repeats: int) -> int: ...

    async def get(self, question: Question) -> ResponseRecord | None: ...


class ReplaySource:
    """Responses recorded earlier, keyed by question id; a recording of repeated runs has several."""

    live = False

    def __init__(self, attempts: Mapping[str, Sequence[ResponseRecord]]):
        self._attempts = attempts
        self._served: dict[str, int] = {}

    def attempts(self, question: Question, repeats: int) -> int:
        """Attempts to replay: those recorded, up to `repeats` (one for a question never recorded)."""
        return max(1, min(repeats, len(self._attempts.get(question.question_id) or [])))

    async def get(self, question: Question) -> ResponseRecord | None:
        """The next recorded attempt of this question (None when the recording has no more)."""
        recorded = self._attempts.get(question.question_id) or []
        index = self._served.get(question.question_id, 0)
        self._served[question.question_id] = index + 1
        return recorded[index] if index < len(recorded) else None


class LiveSource:
    """Calls the user's agent hook, at most `concurrency` at once, each within `timeout`: a sync hook on a
    daemon thread per call, abandoned when it overruns (a daemon cannot delay the end of the run)."""

    live = True

    def __init__(self, agent: AgentCall, concurrency: int, timeout: float | None = None):
        self._agent = agent
        self._concurrency = concurrency
        self._timeout = timeout
        self._semaphore: asyncio.Semaphore | None = None

    def attempts(self, question: Question, repeats: int) -> int:
        return repeats

    async def get(self, question: Question) -> ResponseRecord | None:
        """The agent's response, checked and normalised as a recorded one (a `ResponseError` if malformed)."""
        response = await self._call(question)
        if response is None:
            return None
        return normalise_response(
            response,
            SourceLocation(origin=AGENT_HOOK, question_id=question.question_id),
            filed_as="the question asked",
        )

    async def _call(self, question: Question) -> Any:
        """The agent's response as it returned it, or the error shape for a hook that raised or overran."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self._concurrency)
        async with self._semaphore:
            started = time.perf_counter()
            deadline = asyncio.timeout(self._timeout)
            try:
                async with deadline:
                    response = await run_in_daemon_thread(self._agent, question)
                    if inspect.isawaitable(response):
                        response = await response
            except TimeoutError as error:
                if deadline.expired():
                    return {
                        "status": "error",
                        "error": f"the agent did not answer within {self._timeout:g} s",
                    }
                return _hook_error(error)
            except Exception as error:
                return _hook_error(error)
            if isinstance(response, Mapping) and response.get("status") != "error":
                response = dict(response)
                response.setdefault("elapsed_sec", time.perf_counter() - started)
            return response


def _hook_error(error: Exception) -> dict[str, Any]:
    return {"status": "error", "error": f"the agent hook raised {type(error).__name__}: {error}"}


async def run_in_daemon_thread(function: Callable[..., T], *args: Any) -> T:
    """Run `function(*args)` on a new daemon thread (with the caller's context variables) and await it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def work() -> None:
        try:
            result = context.run(function, *args)
        except BaseException as error:
            deliver = functools.partial(settle, functools.partial(future.set_exception, error))
        else:
            deliver = functools.partial(settle, functools.partial(future.set_result, result))
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(deliver)

    threading.Thread(target=work, name="graphrag-eval-agent", daemon=True).start()
    return await future


class QuestionRunner(abc.ABC):
    """Answers and scores questions; the subclasses decide on which thread and when."""

    def __init__(
        self,
        source: ResponseSource,
        scorers: Sequence[Scorer],
        context_for: Callable[[Question], ScoringContext],
        on_close: Callable[[], Coroutine[Any, Any, None]] | None = None,
        repeats: int = 1,
        prepare: Prepare | None = None,
    ):
        self._repeats = repeats
        self._prepare = prepare
        self._source = source
        self._scorers = list(scorers)
        self._context_for = context_for
        self._on_close = on_close
        self._start()

    @abc.abstractmethod
    def _start(self) -> None:
        """Set up the loop (and thread) this runner answers and scores questions on."""

    @property
    def live(self) -> bool:
        return self._source.live

    @abc.abstractmethod
    def submit(self, questions: Iterable[Question]) -> None:
        """Questions this process will run: a runner may start them before they are asked for."""

    @abc.abstractmethod
    def outcome(self, question: Question, on_wait: Callable[[], None] | None = None) -> AnsweredQuestion:
        """This question's outcome, waiting for it if needed (calling `on_wait` now and then meanwhile)."""

    @abc.abstractmethod
    def finished(self) -> dict[str, AnsweredQuestion]:
        """Outcomes of the questions already done, by id (what an interrupted run can still report)."""

    @abc.abstractmethod
    def forget(self, question: Question) -> None:
        """Drop this question's outcome, so the next `outcome` answers it again (a live rerun)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Cancel unfinished work and release the judge client."""

    async def _evaluate(self, question: Question) -> AnsweredQuestion:
        if self._repeats == 1:
            return await self._attempt(question)
        # The attempts run concurrently; a live source's semaphore keeps the agent within its bound. A
        # replay replays only the attempts recorded: one that does not exist is no failed attempt.
        count = self._source.attempts(question, self._repeats)
        attempts = await asyncio.gather(*(self._attempt(question) for _ in range(count)))
        first = attempts[0]
        return AnsweredQuestion(first.result, first.response, first.problem, tuple(attempts))

    async def _attempt(self, question: Question) -> AnsweredQuestion:
        try:
            response = await self._source.get(question)
        except InputError as error:  # the live agent's response failed the responses' checks
            # Still a result: the question is reported with its error, not left out of the report.
            problem = f"the agent returned a malformed response: {error}"
            return AnsweredQuestion({**base_result(question, None), "error": problem}, None)
        added: dict[str, Any] = {}
        graph_problem = None
        scored_question, scored_response = question, response
        try:
            if self._prepare is not None:
                scored_question, prepared, added, graph_problem = await asyncio.to_thread(
                    self._prepare, question, response
                )
                if response is not None and prepared is not None and prepared is not response:
                    # re-executed steps: the same response, still naming where it came from
                    scored_response = ResponseRecord(prepared, response.source, response.attempt)
            result = await evaluate_question(
                scored_question, scored_response, self._scorers, self._context_for(question)
            )
        except GraphragEvalError as error:
            return AnsweredQuestion(None, response, str(error))
        return AnsweredQuestion({**result, **added}, response, graph_problem)


class InlineRunner(QuestionRunner):
    """Scores each question on the item's own thread: with nothing to wait on, a second thread adds no
    overlap under the GIL and handing questions over costs more than scoring them."""

    _done: dict[str, AnsweredQuestion]

    def _start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._done = {}

    def submit(self, questions: Iterable[Question]) -> None:
        """Nothing to start ahead: each question is scored when its item runs."""

    def outcome(self, question: Question, on_wait: Callable[[], None] | None = None) -> AnsweredQuestion:
        """Score this question now (once: a second call returns the first outcome)."""
        if question.question_id not in self._done:
            outcome = self._loop.run_until_complete(self._evaluate(question))
            self._done[question.question_id] = outcome
        return self._done[question.question_id]

    def finished(self) -> dict[str, AnsweredQuestion]:
        return dict(self._done)

    def forget(self, question: Question) -> None:
        self._done.pop(question.question_id, None)

    def close(self) -> None:
        """Release the judge client, cancel what an interrupt left half done, close the loop."""
        self._loop.run_until_complete(_cancel_all(asyncio.all_tasks(self._loop)))
        if self._on_close is not None:
            self._loop.run_until_complete(self._on_close())
        self._loop.close()


async def _cancel_all(tasks: set[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class BackgroundRunner(QuestionRunner):
    """Answers and scores submitted questions concurrently on a private event loop thread (I/O-bound runs)."""

    _futures: dict[str, concurrent.futures.Future[AnsweredQuestion]]

    def _start(self) -> None:
        self._futures = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="graphrag-eval", daemon=True)
        self._thread.start()

    def submit(self, questions: Iterable[Question]) -> None:
        with self._lock:
            for question in questions:
                if question.question_id not in self._futures:
                    self._futures[question.question_id] = asyncio.run_coroutine_threadsafe(
                        self._evaluate(question), self._loop
                    )

    def outcome(self, question: Question, on_wait: Callable[[], None] | None = None) -> AnsweredQuestion:
        """Block until this question is done (submitting it if needed)."""
        self.submit([question])
        future = self._futures[question.question_id]
        while True:
            # Short waits, not one long one: the kernel may deliver Ctrl-C's SIGINT to another thread,
            # and Python runs its handler (raising KeyboardInterrupt) only when this thread wakes.
            with contextlib.suppress(concurrent.futures.TimeoutError):
                return future.result(timeout=SIGNAL_CHECK_INTERVAL)
            if on_wait is not None:
                on_wait()

    def forget(self, question: Question) -> None:
        with self._lock:
            self._futures.pop(question.question_id, None)

    def progress(self) -> tuple[int, int]:
        """Questions done and questions started so far (the progress line's count)."""
        with self._lock:
            futures = list(self._futures.values())
        return sum(1 for future in futures if future.done()), len(futures)

    def finished(self) -> dict[str, AnsweredQuestion]:
        with self._lock:
            futures = dict(self._futures)
        return {
            question_id: future.result()
            for question_id, future in futures.items()
            if future.done() and not future.cancelled() and future.exception() is None
        }

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
