"""The judge client: one async client for OpenAI-compatible chat and embeddings endpoints.

It owns the concurrency bound, retries, timeout, cache, cost accounting and key redaction, so no
scorer re-implements them. The SDK client and semaphore are bound to an event loop, so they are made
per running loop: one JudgeClient serves several loops in sequence (`aclose()` at the end of each).
"""

from __future__ import annotations

import array
import asyncio
import base64
import binascii
import json
import logging
import random
import sys
import urllib.parse
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import openai

from pytest_graphrag_eval.errors import ConfigurationError, json_problem
from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.llm.batch_transport import (
    NOT_IN_A_BATCH,
    URLS,
    BatchRequest,
    BatchTransport,
    CallDeferred,
)
from pytest_graphrag_eval.llm.cache import ResponseCache, cache_dir_problem, cache_key
from pytest_graphrag_eval.llm.errors import CallRefused, LLMError
from pytest_graphrag_eval.llm.estimate import CallPlanner, CostCeiling
from pytest_graphrag_eval.llm.limits import CACHE_MISS, Budget
from pytest_graphrag_eval.llm.pricing import price_for
from pytest_graphrag_eval.llm.redact import redact, safe_url
from pytest_graphrag_eval.llm.retry import (
    Failure,
    MalformedResponse,
    classify,
    connection_error_in,
    retry_delay,
)
from pytest_graphrag_eval.llm.settings import OPENAI_DEFAULT_BASE_URL, LLMSettings
from pytest_graphrag_eval.report_model import Refusal

log = logging.getLogger("pytest_graphrag_eval.llm")

T = TypeVar("T")
R = TypeVar("R", bound="ChatResult | EmbeddingResult")


@dataclass(frozen=True)
class ChatResult:
    """One chat reply; tokens and cost are the original call's even when `cached`, so costs are stable."""

    text: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cached: bool
    model: str = ""
    price_known: bool = True


@dataclass(frozen=True)
class EmbeddingResult:
    """One vector per input text, in input order; cost semantics as ChatResult."""

    vectors: list[list[float]]
    input_tokens: int
    cost_usd: float
    cached: bool
    model: str = ""
    price_known: bool = True


@dataclass
class ClientStats:
    """What this client spent in this process; cache hits add no tokens or cost.

    `calls_made` counts requests that reached the server (retries and billed batch replies included),
    `refused_connections` those that never did; `cache_miss_keys` name a cache-only run's missing files.
    """

    calls_made: int = 0
    refused_connections: int = 0
    cache_hits: int = 0
    cache_misses_refused: int = 0
    budget_refused: int = 0
    retries: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    batch_requests: int = 0
    batch_failed: int = 0
    unpriced_models: set[str] = field(default_factory=set)
    cache_miss_keys: set[str] = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["unpriced_models"] = sorted(self.unpriced_models)
        data["cache_miss_keys"] = sorted(self.cache_miss_keys)
        return data


def check_connection_settings(settings: LLMSettings) -> None:
    """Raise ConfigurationError when no client could be built from `settings`."""
    if not settings.api_key:
        raise ConfigurationError(
            "no API key for the LLM judge: set OPENAI_API_KEY (or AZURE_OPENAI_API_KEY for Azure); "
            "local servers accept any non-empty value"
        )
    if settings.is_azure and not settings.api_version:
        raise ConfigurationError("Azure OpenAI needs an API version: set OPENAI_API_VERSION")
    if urllib.parse.urlsplit(settings.endpoint).username is not None:  # the HTTP client refuses each call
        raise ConfigurationError(
            "the judge endpoint URL (OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT) must not carry credentials "
            "(user:password@): the key goes in OPENAI_API_KEY"
        )


def make_sdk_client(
    settings: LLMSettings, *, on_response: Callable[[Any], Awaitable[None]] | None = None
) -> openai.AsyncOpenAI:
    """The official async SDK client for `settings`, SDK retries off, nothing read from the environment.

    `on_response` sees every HTTP response, e.g. to count the tokens of calls a library makes.
    """
    check_connection_settings(settings)
    # Not the SDK's default wrapper: its finalizer schedules `aclose()` on whatever loop runs at
    # garbage collection, which fails for connections of an earlier, closed loop.
    http_client = _http_client(
        timeout=settings.timeout,
        follow_redirects=True,
        event_hooks={"response": [on_response] if on_response is not None else []},
    )
    common: dict[str, Any] = {
        "api_key": settings.api_key,
        "max_retries": 0,
        "timeout": settings.timeout,
        "http_client": http_client,
    }
    if settings.azure_endpoint is not None:
        return openai.AsyncAzureOpenAI(
            azure_endpoint=settings.azure_endpoint, api_version=settings.api_version, **common
        )
    return openai.AsyncOpenAI(base_url=settings.base_url or OPENAI_DEFAULT_BASE_URL, **common)


def _http_client(**options: Any) -> Any:
    """The SDK's aiohttp transport when its extra is installed (our `[speed]`), else its default one.

    The default pool's CPU per request grows with connections in flight; aiohttp's stays flat
    (benchmarks/bench_judge_throughput.py).
    """
    aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)  # openai releases since mid 2025
    if aiohttp_client is not None:
        try:
            return aiohttp_client(**options)
        except RuntimeError:  # the SDK's aiohttp extra is not installed
            pass
    return openai.DefaultAsyncHttpxClient(**options)


@dataclass
class _LoopState:
    sdk: openai.AsyncOpenAI
    semaphore: asyncio.Semaphore
    budget_settled: asyncio.Event = field(default_factory=asyncio.Event)  # replaced once set


class JudgeClient:
    """Chat and embeddings calls with concurrency bound, retries, cache and cost accounting."""

    def __init__(self, settings: LLMSettings, batches: BatchTransport | None = None) -> None:
        """`batches` takes a batch judge's cache misses; without one, a batch judge fails each miss."""
        # Fail at start-up, not at the first question, on a missing key or API version
        # (a cache-only run connects nowhere, so offline CI needs no key).
        if not (settings.cache_only or settings.dry_run):
            check_connection_settings(settings)
        self.settings = settings
        self.stats = ClientStats()
        self.budget = Budget(settings.max_cost_usd, settings.max_calls)
        # What a request reserves from a USD budget while in flight (llm/limits.py).
        self._ceiling = (
            CostCeiling(settings.prices, settings.max_tokens) if settings.max_cost_usd is not None else None
        )
        # A dry run records every call it would send and answers it with a synthetic reply (llm/estimate.py).
        self.planner = CallPlanner(settings.max_tokens) if settings.dry_run else None
        self._cache = ResponseCache(settings.cache_dir) if settings.cache_dir and settings.use_cache else None
        if self._cache is not None and (problem := cache_dir_problem(self._cache.root.parent)):
            raise ConfigurationError(
                f"cannot use the judge cache folder {self._cache.root.parent}: {problem}; "
                "choose another cache folder or turn the cache off"
            )
        self._rng = random.Random()  # jitter only; not shared with user code's global seed
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        self._breaker = ConnectionBreaker(settings.max_retries + 1)
        self.pending_calls = 0  # calls past the cache, waiting for a slot or in flight (progress display)
        self.batches = batches

    def __repr__(self) -> str:
        return f"JudgeClient({self.settings!r})"

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        model: str | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = 0.0,
        cache_key_extra: str = "",
    ) -> ChatResult:
        """One chat completion; `temperature=None` omits it, a new `cache_key_extra` a new sample."""
        model = model or self.settings.model
        identity: dict[str, Any] = {
            "kind": "chat",
            "model": model,
            "messages": messages,
            "response_format": response_format,
            "temperature": temperature,
            "extra": cache_key_extra,
        }
        if self.settings.max_tokens is not None:  # only when set, so existing cache entries stay valid
            identity["max_tokens"] = self.settings.max_tokens
        key = cache_key(identity)
        cached = self._cached(
            key, "chat", model, lambda entry: ChatResult(**entry, cached=True, model=model), response_format
        )
        if cached is not None:
            return cached
        if self.planner is not None:
            text = self.planner.plan_chat(messages, model, response_format)
            return ChatResult(text, 0, 0, 0.0, False, model)
        optional = {
            "temperature": temperature,
            "response_format": response_format,
            "max_tokens": self.settings.max_tokens,
        }
        request = {
            "model": model,
            "messages": messages,
            **{k: v for k, v in optional.items() if v is not None},
        }
        return await self._send(
            BatchRequest(key, "chat", model, request),
            lambda body: self._chat_result(body, model),
            lambda ceiling: ceiling.chat(messages, model),
        )

    async def embed(self, texts: list[str], *, model: str | None = None) -> EmbeddingResult:
        """Embed `texts` in one request (vectors in input order)."""
        model = model or self.settings.embedding_model
        if not texts:
            return EmbeddingResult([], 0, 0.0, False, model)
        key = cache_key({"kind": "embeddings", "model": model, "texts": texts})

        def from_cache(entry: dict[str, Any]) -> EmbeddingResult | None:
            result = EmbeddingResult(**entry, cached=True, model=model)
            return result if len(result.vectors) == len(texts) else None

        cached = self._cached(key, "embeddings", model, from_cache)
        if cached is not None:
            return cached
        if self.planner is not None:
            return EmbeddingResult(self.planner.plan_embeddings(texts, model), 0, 0.0, False, model)
        # Base64 vectors are decoded without numpy, whose first import inside the call's timeout
        # could outlast a short timeout.
        return await self._send(
            BatchRequest(
                key, "embeddings", model, {"model": model, "input": texts, "encoding_format": "base64"}
            ),
            lambda body: self._embedding_result(body, model, len(texts)),
            lambda ceiling: ceiling.embeddings(texts, model),
        )

    def store_batch_reply(self, request: BatchRequest, body: JSONValue) -> None:
        """Store one reply of a judge batch in the cache at batch prices; MalformedResponse if unusable."""
        result: ChatResult | EmbeddingResult
        if request.kind == "chat":
            result = self._chat_result(body, request.model, batch=True)
        else:
            inputs = request.body["input"]
            expected = len(inputs) if isinstance(inputs, list) else 0
            result = self._embedding_result(body, request.model, expected, batch=True)
        self.stats.calls_made += 1
        if self._cache is not None:
            self._cache.put(request.key, _cache_entry(result))

    def batch_sdk(self) -> openai.AsyncOpenAI:
        """The SDK client of the running loop, for the Batch API's files and batches endpoints."""
        return self._state().sdk

    async def aclose(self) -> None:
        """Release the current loop's connections (and forget states of closed loops)."""
        loop = asyncio.get_running_loop()
        state = self._states.pop(loop, None)
        self._forget_closed_loops()
        if state is not None:
            await state.sdk.close()

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            self._forget_closed_loops()
            state = _LoopState(make_sdk_client(self.settings), asyncio.Semaphore(self.settings.concurrency))
            self._states[loop] = state
        return state

    def _forget_closed_loops(self) -> None:
        for loop in [loop for loop in self._states if loop.is_closed()]:
            del self._states[loop]

    async def _send(
        self,
        request: BatchRequest,
        make_result: Callable[[str], R],
        ceiling: Callable[[CostCeiling], float],
    ) -> R:
        """A cache miss: refused (cache-only), deferred (batch judge), or sent (`pending_calls`), cached."""
        self._refuse_if_cache_only(request)
        if self.settings.batch:
            self._defer(request)
        estimate_usd = ceiling(self._ceiling) if self._ceiling is not None else 0.0
        self.pending_calls += 1
        try:
            result = await self._send_with_retries(request, make_result, estimate_usd)
        finally:
            self.pending_calls -= 1
        if self._cache is not None:  # on a worker thread: making a file may take a millisecond of the loop
            await asyncio.to_thread(self._cache.put, request.key, _cache_entry(result))
        return result

    async def _send_with_retries(
        self, request: BatchRequest, parse: Callable[[str], T], estimate_usd: float
    ) -> T:
        """Send with the concurrency bound, timeout and retries; raise LLMError when it finally fails."""
        kind, model = request.kind, request.model
        # The SDK's documented low-level `post`: no walk of the body through parameter types and no
        # response model, most of the CPU per call at tens in flight (bench_judge_throughput.py).
        path = URLS[kind].removeprefix("/v1")
        settings = self.settings
        attempt = 0
        where = f"{kind} call to model {model!r} at {safe_url(settings.endpoint)}"
        while True:
            attempt += 1
            state = self._state()
            try:
                async with state.semaphore:
                    # Checked once a slot is free: calls queued behind the bound must not each try again,
                    # nor start once the budget is spent.
                    if self._breaker.open_reason is not None:
                        self.stats.failures += 1
                        raise LLMError(
                            redact(f"{where} not sent: {self._breaker.open_reason}", settings),
                            kind=kind,
                            model=model,
                            attempts=attempt - 1,
                        )
                    await self._admit(kind, model, estimate_usd, state)
                    try:
                        async with asyncio.timeout(settings.timeout):
                            response = await state.sdk.post(path, body=request.body, cast_to=str)
                    finally:
                        # No await until the caller records the reply's cost, so no request is admitted
                        # between this release and that record.
                        self._settle(estimate_usd, state)
            except Exception as exc:
                failure = classify(exc, settings.timeout)
                if failure is None:
                    raise
                if _never_reached_server(exc):
                    self.stats.refused_connections += 1
                    if self._breaker.record_refusal(failure.description):
                        log.warning(redact(f"{where}: {self._breaker.open_reason}", settings))
                else:
                    self.stats.calls_made += 1
                    self._breaker.record_answer()
            else:
                self.stats.calls_made += 1
                self._breaker.record_answer()
                try:
                    return parse(response)
                except MalformedResponse as exc:
                    failure = Failure(f"unusable response: {exc}", retryable=exc.retryable)
            if not failure.retryable or attempt > settings.max_retries:
                self.stats.failures += 1
                outcome = (
                    "failed (not retryable)" if not failure.retryable else f"failed after {attempt} attempts"
                )
                raise LLMError(
                    redact(f"{where} {outcome}: {failure.description}", settings),
                    kind=kind,
                    model=model,
                    status=failure.status,
                    attempts=attempt,
                    retryable=failure.retryable,
                ) from None
            delay = retry_delay(failure, attempt - 1, settings.backoff_base, settings.backoff_max, self._rng)
            self.stats.retries += 1
            log.info(redact(f"{where}: {failure.description}; retry {attempt} in {delay:.2f} s", settings))
            await asyncio.sleep(delay)

    def _refuse_if_cache_only(self, request: BatchRequest) -> None:
        if self.settings.cache_only:
            self.stats.cache_misses_refused += 1
            self.stats.cache_miss_keys.add(request.key)
            self.stats.failures += 1
            raise CallRefused(
                f"{request.kind} call to model {request.model!r}: {CACHE_MISS}; cache key {request.key}",
                reason=Refusal.CACHE_MISS,
                kind=request.kind,
                model=request.model,
            )

    def _defer(self, request: BatchRequest) -> None:
        """A batch judge's miss: recorded for the next batch (`CallDeferred`), or `Refusal.BATCH`."""
        reason = self.batches.take(request) if self.batches is not None else NOT_IN_A_BATCH
        if reason is None:
            raise CallDeferred(
                f"{request.kind} call deferred to a judge batch", kind=request.kind, model=request.model
            )
        self.stats.failures += 1
        raise CallRefused(
            f"{request.kind} call to model {request.model!r}: {reason}",
            reason=Refusal.BATCH,
            kind=request.kind,
            model=request.model,
        )

    async def _admit(self, kind: str, model: str, estimate_usd: float, state: _LoopState) -> None:
        """Wait until the budget admits this request (reserving its estimate), or raise CallRefused."""
        while True:
            try:
                if self.budget.admit(kind, model, estimate_usd):
                    return
            except CallRefused:
                self.stats.budget_refused += 1
                self.stats.failures += 1
                raise
            await state.budget_settled.wait()

    def _settle(self, estimate_usd: float, state: _LoopState) -> None:
        """Release a request's reservation and wake the requests waiting for one."""
        self.budget.release(estimate_usd)
        settled, state.budget_settled = state.budget_settled, asyncio.Event()
        settled.set()

    def _cost(
        self, model: str, input_tokens: int, output_tokens: int, batch: bool = False
    ) -> tuple[float, bool]:
        price = price_for(model, self.settings.prices)
        if price is not None and batch:
            price = price.batch()
        if price is None:
            if model not in self.stats.unpriced_models:
                log.warning("no price known for model %r; its cost is reported as 0.0", model)
            self.stats.unpriced_models.add(model)
            cost = 0.0
        else:
            cost = price.cost(input_tokens, output_tokens)
        self.stats.input_tokens += input_tokens
        self.stats.output_tokens += output_tokens
        self.stats.cost_usd += cost
        self.budget.record_cost(cost)
        return cost, price is not None

    def _cached(
        self,
        key: str,
        kind: str,
        model: str,
        build: Callable[[dict[str, Any]], T | None],
        response_format: dict[str, Any] | None = None,
    ) -> T | None:
        """The cached reply (a hit, which a dry run records), or None: a miss or an unusable entry."""
        entry = self._cache.get(key) if self._cache is not None else None
        if entry is None or entry.get("kind") != kind or entry.get("model") != model:
            return None
        if not isinstance(stored := entry.get("result"), dict):
            return None
        self.stats.cache_hits += 1
        try:
            result = build(stored)
        except TypeError:
            result = None
        if result is None:
            log.warning("ignoring LLM cache entry %s with unexpected fields", key)
        elif self.planner is not None:
            self.planner.record_cached(kind, model, response_format)
        return result

    def _chat_result(self, body: JSONValue, model: str, batch: bool = False) -> ChatResult:
        """The reply in a chat completion's JSON body, its cost counted; MalformedResponse when unusable."""
        response = _json_object(body, "expected a chat completion with at least one choice")
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedResponse("expected a chat completion with at least one choice")
        message = choices[0].get("message")
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        if not isinstance(content, str):
            refusal = message.get("refusal")
            if refusal:
                raise MalformedResponse(f"the model refused: {str(refusal)[:200]}", retryable=False)
            raise MalformedResponse("the reply has no text content")
        usage = response.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        input_tokens, output_tokens = (
            _count(usage.get("prompt_tokens")),
            _count(usage.get("completion_tokens")),
        )
        cost, known = self._cost(model, input_tokens, output_tokens, batch)
        return ChatResult(content, input_tokens, output_tokens, cost, False, model, known)

    def _embedding_result(
        self, body: JSONValue, model: str, expected: int, batch: bool = False
    ) -> EmbeddingResult:
        """The vectors (in input order, base64 float32 or plain lists) of an embeddings body, their
        cost counted; MalformedResponse when unusable."""
        response = _json_object(body, "expected an embeddings list")
        data = response.get("data")
        if not isinstance(data, list):
            raise MalformedResponse("expected an embeddings list")
        try:
            items = sorted(data, key=lambda item: _numeric(_member(item, "index"), int, "an embedding index"))
            vectors = [_vector(_member(item, "embedding")) for item in items]
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise MalformedResponse(f"bad embedding item ({exc})") from None
        if len(vectors) != expected or len({len(v) for v in vectors}) > 1:
            raise MalformedResponse(f"expected {expected} vectors of one dimension, got {len(vectors)}")
        usage = response.get("usage")
        input_tokens = _count(usage.get("prompt_tokens") if isinstance(usage, dict) else None)
        cost, known = self._cost(model, input_tokens, 0, batch)
        return EmbeddingResult(vectors, input_tokens, cost, False, model, known)


class ConnectionBreaker:
    """Fail fast once the endpoint has refused `threshold` connections in a row.

    Without it every question waits out its own retries against a judge that is not there. Any answer
    (even an HTTP error) resets the count; once open, it stays open for this client.
    """

    def __init__(self, threshold: int) -> None:
        self.threshold = max(1, threshold)
        self.refusals_in_a_row = 0
        self.open_reason: str | None = None

    def record_refusal(self, description: str) -> bool:
        """Count one refused connection; True when this one opened the breaker."""
        self.refusals_in_a_row += 1
        if self.open_reason is None and self.refusals_in_a_row >= self.threshold:
            self.open_reason = (
                f"the endpoint refused {self.refusals_in_a_row} connections in a row (last: {description}); "
                "every remaining judge call fails at once. Is the judge server running and its URL right?"
            )
            return True
        return False

    def record_answer(self) -> None:
        self.refusals_in_a_row = 0


def _json_object(body: JSONValue, expected: str) -> dict[str, JSONValue]:
    """The JSON object of a response body (text or decoded); else MalformedResponse(`expected`)."""
    try:
        response: JSONValue = json.loads(body) if isinstance(body, str) else body
    except (ValueError, RecursionError) as exc:
        raise MalformedResponse(f"malformed response body ({json_problem(exc)})") from None
    if not isinstance(response, dict):
        raise MalformedResponse(expected)
    return response


def _vector(embedding: JSONValue) -> list[float]:
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding, validate=True)
        if len(raw) % 4:
            raise ValueError("base64 embedding is not a whole number of float32 values")
        values = array.array("f", raw)
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()
    if isinstance(embedding, list):
        return [_numeric(x, float, "a vector component") for x in embedding]
    raise TypeError(f"embedding must be a list or base64 text, got {type(embedding).__name__}")


def _cache_entry(result: ChatResult | EmbeddingResult) -> dict[str, Any]:
    """A reply's cache entry: its kind and model, and the rest of it (but `cached`) as its result."""
    kept = {name: value for name, value in vars(result).items() if name not in ("cached", "model")}
    kind = "chat" if isinstance(result, ChatResult) else "embeddings"
    return {"kind": kind, "model": result.model, "result": kept}


def _member(item: JSONValue, key: str) -> JSONValue:
    if not isinstance(item, dict):
        raise TypeError(f"an embedding item must be an object, got {type(item).__name__}")
    return item[key]


def _numeric(value: JSONValue, convert: Callable[[int | float | str], T], what: str) -> T:
    if isinstance(value, int | float | str):
        return convert(value)
    raise TypeError(f"{what} must be a number, got {type(value).__name__}")


def _never_reached_server(exc: Exception) -> bool:
    """Connection failures (refused, reset before a reply) never got an HTTP answer; timeouts did reach."""
    if connection_error_in(exc) is not None:
        return True
    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def _count(value: JSONValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
