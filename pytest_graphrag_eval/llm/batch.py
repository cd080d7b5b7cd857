"""Judge requests through the OpenAI Batch API, answered into the judge cache.

A collecting pass records each cache miss (`CallDeferred`); `JudgeBatches.send` submits them, polls
and caches the replies; a later pass scores from the cache. A batch's id stays in a state file
until its replies are stored, so an interrupted run resumes it instead of paying twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.llm.batch_transport import NOT_IN_A_BATCH, URLS, BatchRequest, BatchSender
from pytest_graphrag_eval.llm.errors import LLMError
from pytest_graphrag_eval.llm.limits import BATCH_UNANSWERED
from pytest_graphrag_eval.llm.redact import redact, safe_url
from pytest_graphrag_eval.llm.retry import MalformedResponse, classify, retry_delay

if TYPE_CHECKING:
    import openai
    from openai.types import Batch

    from pytest_graphrag_eval.llm.settings import LLMSettings

log = logging.getLogger("pytest_graphrag_eval.llm")

T = TypeVar("T")

MAX_REQUESTS_PER_BATCH = 50_000  # the Batch API's limit per input file
STATE_FOLDER = "llm-batches"
FIRST_POLL = 0.2  # seconds; each wait is 1.5 times the last, up to MAX_POLL
MAX_POLL = 30.0
STATUS_SLICE = 0.1  # how often the status callback runs while waiting (a progress line's refresh)
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


def judge_batches(settings: LLMSettings) -> JudgeBatches | None:
    """The batch transport to hand a judge client built with `settings` (None unless a batch judge)."""
    return JudgeBatches(settings) if settings.batch else None


class JudgeBatches:
    """The Batch API transport of one judge client: the misses of a collecting pass, and why each
    request a batch left unanswered fails for the rest of the run."""

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.failures: dict[str, str] = {}
        self._collected: dict[str, BatchRequest] | None = None

    def take(self, request: BatchRequest) -> str | None:
        if request.key in self.failures:
            return self.failures[request.key]
        if self._collected is None:
            return NOT_IN_A_BATCH
        self._collected.setdefault(request.key, request)
        return None

    @contextlib.contextmanager
    def collecting(self) -> Iterator[dict[str, BatchRequest]]:
        """A collecting pass: the requests deferred inside it, by cache key (each once)."""
        collected: dict[str, BatchRequest] = {}
        self._collected = collected
        try:
            yield collected
        finally:
            self._collected = None

    async def send(
        self,
        sender: BatchSender,
        requests: Iterable[BatchRequest],
        on_status: StatusCallback | None = None,
    ) -> list[BatchRecord]:
        """Send `requests` as batches (or resume the ones already sent), store their replies through
        `sender`. Requests without a reply keep the reason in `failures`. One record per batch."""
        cache_dir = self.settings.cache_dir
        assert cache_dir is not None, "LLMSettings refuses a batch judge without a cache"
        groups = groups_of(requests)
        runs = [_BatchRun(self, sender, group, state_path(cache_dir, group)) for group in groups]
        try:
            await asyncio.gather(*(run.submit() for run in runs))
            watcher = asyncio.create_task(_report_status(runs, on_status)) if on_status is not None else None
            try:
                await asyncio.gather(*(run.finish() for run in runs))
            finally:
                if watcher is not None:
                    watcher.cancel()
        finally:
            await sender.aclose()
        return [run.record for run in runs if run.record is not None]


@dataclass
class BatchRecord:
    """What one batch did, for the report: its id, final status and request counts."""

    batch_id: str
    kind: str
    model: str
    status: str
    requests: int
    answered: int = 0
    failed: int = 0
    resumed: bool = False

    def as_dict(self) -> dict[str, str | int | bool]:
        """The fields after `kind`, after the batch's id and its endpoint."""
        rest = {name: value for name, value in vars(self).items() if name not in ("batch_id", "kind")}
        return {"id": self.batch_id, "endpoint": URLS[self.kind], **rest}


StatusCallback = Callable[[str], None]


def groups_of(requests: Iterable[BatchRequest]) -> list[list[BatchRequest]]:
    """One group per endpoint and model (the Batch API's rule), split at `MAX_REQUESTS_PER_BATCH`."""
    by_target: dict[tuple[str, str], list[BatchRequest]] = {}
    for request in requests:
        by_target.setdefault((request.kind, request.model), []).append(request)
    return [
        group[start : start + MAX_REQUESTS_PER_BATCH]
        for group in by_target.values()
        for start in range(0, len(group), MAX_REQUESTS_PER_BATCH)
    ]


def state_path(cache_dir: Path, group: Sequence[BatchRequest]) -> Path:
    """The state file of the batch holding exactly these requests."""
    digest = hashlib.sha256("\n".join(sorted(request.key for request in group)).encode()).hexdigest()
    return cache_dir / STATE_FOLDER / f"{digest[:32]}.json"


def read_state(path: Path) -> str | None:
    """The batch id an earlier run left, or None (no file, or one that cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("ignoring unreadable judge batch state %s: %s", path, exc)
        return None
    batch_id = data.get("batch_id") if isinstance(data, dict) else None
    return batch_id if isinstance(batch_id, str) and batch_id else None


async def _report_status(runs: Sequence[_BatchRun], on_status: StatusCallback) -> None:
    started = time.monotonic()
    while True:
        done = sum(run.done for run in runs)
        total = sum(len(run.group) for run in runs)
        states = ", ".join(sorted({run.status for run in runs}))
        elapsed = time.monotonic() - started
        on_status(f"graphrag judge batch: {done}/{total} requests done ({states}) | {elapsed:.0f}s")
        await asyncio.sleep(STATUS_SLICE)


class _BatchRun:
    """One group of requests through one batch: submit or resume, poll, store the replies."""

    def __init__(
        self, batches: JudgeBatches, sender: BatchSender, group: Sequence[BatchRequest], state: Path
    ) -> None:
        self.batches = batches
        self.sender = sender
        self.group = group
        self.state = state
        self.record: BatchRecord | None = None
        self.status = "submitting"
        self.done = 0
        self._where = f"judge batch of {len(group)} {group[0].kind} requests to model {group[0].model!r}"

    async def submit(self) -> None:
        first = self.group[0]
        resumed = read_state(self.state)
        if resumed is not None:
            log.info("resuming judge batch %s (%d requests)", resumed, len(self.group))
        try:
            batch_id = resumed or await self._create()
        except LLMError as error:
            self._fail_all(str(error))
            return
        self.record = BatchRecord(
            batch_id, first.kind, first.model, "submitted", len(self.group), resumed=bool(resumed)
        )
        self._where = f"judge batch {batch_id}"

    async def _create(self) -> str:
        first = self.group[0]
        content = "".join(request.line() + "\n" for request in self.group).encode("utf-8")
        uploaded = await self._call(
            "upload",
            lambda sdk: sdk.files.create(file=("graphrag-judge-batch.jsonl", content), purpose="batch"),
        )
        batch = await self._call(
            "create",
            lambda sdk: sdk.batches.create(
                input_file_id=uploaded.id,
                endpoint=URLS[first.kind],  # type: ignore[arg-type]
                completion_window="24h",
                metadata={"source": "pytest-graphrag-eval"},
            ),
        )
        # Kept before anything else can be interrupted: a resumed run must find this batch, not send another.
        state = {
            "batch_id": batch.id,
            "requests": len(self.group),
            "endpoint": URLS[first.kind],
            "model": first.model,
        }
        write_text_atomic(self.state, json.dumps(state))  # an interrupt leaves no half-written file
        self.sender.stats.batch_requests += len(self.group)
        return str(batch.id)

    async def finish(self) -> None:
        if self.record is None:
            return
        record = self.record
        try:
            batch = await self._poll(record.batch_id)
            record.status = self.status = str(batch.status)
            answered = await self._store_output(batch.output_file_id)
            failures = await self._error_lines(batch.error_file_id)
        except LLMError as error:
            record.status = self.status = "unknown"
            if error.status == 404:  # the server does not know it (another account, long gone): send anew
                self.state.unlink(missing_ok=True)
                self._fail_all(f"{error}; the next run submits its requests again", keep_record=True)
            else:  # the batch may still run: its state file stays for the next run
                self._fail_all(f"{error}; the next run resumes it", keep_record=True)
            return
        reason = f"judge batch {record.batch_id} ended {record.status}"
        if batch.status == "failed":
            reason += _batch_errors(batch)
        for request in self.group:
            if request.key in answered:
                continue
            line_error = failures.get(request.key)
            if line_error is None:
                why = reason
            elif batch.status == "completed":
                why = f"judge batch {record.batch_id}: {line_error}"
            else:
                why = f"{reason} ({line_error})"
            self.batches.failures[request.key] = f"{BATCH_UNANSWERED}: {why}"
        record.answered = len(answered)
        record.failed = len(self.group) - len(answered)
        self.sender.stats.batch_failed += record.failed
        self.done = len(self.group)
        self.state.unlink(missing_ok=True)  # every reply it had is stored; a later run sends what is missing

    async def _poll(self, batch_id: str) -> Batch:
        wait = FIRST_POLL
        while True:
            batch = await self._call("status", lambda sdk: sdk.batches.retrieve(batch_id))
            self.status = str(batch.status)
            counts = getattr(batch, "request_counts", None)
            if counts is not None:
                self.done = int(counts.completed or 0) + int(counts.failed or 0)
            if batch.status in ENDED:
                return batch
            await asyncio.sleep(wait)
            wait = min(MAX_POLL, wait * 1.5)

    async def _store_output(self, file_id: str | None) -> set[str]:
        """Store every answered line in the cache; the keys stored."""
        stored: set[str] = set()
        if not file_id:
            return stored
        by_key = {request.key: request for request in self.group}
        for line in await self._lines(file_id):
            request = by_key.get(str(line.get("custom_id")))
            response = line.get("response")
            if request is None or not isinstance(response, dict) or response.get("status_code") != 200:
                continue
            try:
                await asyncio.to_thread(self.sender.store_batch_reply, request, response.get("body"))
            except MalformedResponse as exc:
                self.batches.failures[request.key] = f"{BATCH_UNANSWERED}: unusable reply ({exc})"
                continue
            stored.add(request.key)
        return stored

    async def _error_lines(self, file_id: str | None) -> dict[str, str]:
        """Why each line of the error file got no reply, by key."""
        if not file_id:
            return {}
        return {str(line.get("custom_id")): _line_error(line) for line in await self._lines(file_id)}

    async def _lines(self, file_id: str) -> list[dict[str, JSONValue]]:
        content = await self._call("download", lambda sdk: sdk.files.content(file_id))
        lines = []
        for number, text in enumerate(content.text.split("\n"), 1):  # JSON text may hold U+2028
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except (ValueError, RecursionError):
                log.warning("%s: line %d of file %s is not JSON; skipped", self._where, number, file_id)
                continue
            if isinstance(line, dict):
                lines.append(line)
        return lines

    async def _call(self, what: str, call: Callable[[openai.AsyncOpenAI], Awaitable[T]]) -> T:
        """One Batch API request with the client's timeout and retries; LLMError when it finally fails."""
        settings = self.batches.settings
        rng = random.Random()
        attempt = 0
        while True:
            try:
                async with asyncio.timeout(settings.timeout):
                    return await call(self.sender.batch_sdk())
            except Exception as exc:
                failure = classify(exc, settings.timeout)
                if failure is None:
                    raise
            attempt += 1
            if not failure.retryable or attempt > settings.max_retries:
                raise LLMError(
                    redact(
                        f"{self._where} at {safe_url(settings.endpoint)}: "
                        f"{what} failed: {failure.description}",
                        settings,
                    ),
                    status=failure.status,
                    attempts=attempt,
                )
            await asyncio.sleep(
                retry_delay(failure, attempt - 1, settings.backoff_base, settings.backoff_max, rng)
            )

    def _fail_all(self, reason: str, keep_record: bool = False) -> None:
        for request in self.group:
            self.batches.failures[request.key] = f"{BATCH_UNANSWERED}: {reason}"
        self.sender.stats.batch_failed += len(self.group)
        if keep_record and self.record is not None:
            self.record.failed = len(self.group)
        log.warning("%s", reason)


def _line_error(line: Mapping[str, JSONValue]) -> str:
    error = line.get("error")
    if isinstance(error, dict) and error.get("message"):
        return f"{error.get('code') or 'error'}: {error['message']}"
    response = line.get("response")
    if isinstance(response, dict):
        body = response.get("body")
        detail = body.get("error") if isinstance(body, dict) else None
        message = detail.get("message") if isinstance(detail, dict) else None
        return f"HTTP {response.get('status_code')}" + (f": {message}" if message else "")
    return "no reply"


def _batch_errors(batch: Batch) -> str:
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) or []
    messages = [str(getattr(item, "message", "") or "") for item in data]
    return f" ({'; '.join(m for m in messages if m)[:300]})" if any(messages) else ""
