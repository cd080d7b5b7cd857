"""A real OpenAI-compatible HTTP server on 127.0.0.1 for offline tests and benchmarks.

It speaks `POST /v1/chat/completions` and `POST /v1/embeddings` in the OpenAI wire
format (also under Azure's `/openai/deployments/<name>/…` paths), so the official
SDK talks to it over real sockets. Replies come from a per-endpoint queue, then
from a handler function, then from defaults: a fixed chat text and deterministic
bag-of-words embeddings (texts sharing words get a high cosine). Faults are
replies too: `Reply.rate_limited()`, `Reply.server_error()`, `Reply.slow()`,
`Reply.malformed()`, `Reply.bad_request()`.

Requests are served by a thread each (many concurrent clients, each reply
waiting `latency` seconds). The request log keeps bodies but never the API key:
only whether a credential arrived (and matched `expected_api_key`, if set).

    with FakeOpenAIServer(latency=0.1) as server:
        server.enqueue(Reply.rate_limited(retry_after=1), "the answer")
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ENDPOINTS = ("chat", "embeddings")
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Reply:
    """A scripted reply. By default a 200 with `content` (chat) or `embeddings` (embeddings).

    `body` replaces the whole response body verbatim (malformed JSON); `delay` is
    added to the server latency; token counts default to word counts.
    """

    content: str | None = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None
    delay: float = 0.0
    embeddings: list[list[float]] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1, *, millis: bool = False) -> Reply:
        """429 with `Retry-After: <seconds or HTTP date>` (or `retry-after-ms` when `millis`)."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            if millis:
                headers["retry-after-ms"] = str(retry_after)
            else:
                headers["retry-after"] = str(retry_after)
        return cls.error(429, "Rate limit reached, please retry", "rate_limit_exceeded", headers)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls.error(status, "The server had an error while processing your request", "server_error")

    @classmethod
    def bad_request(cls, message: str = "Invalid request") -> Reply:
        return cls.error(400, message, "invalid_request_error")

    @classmethod
    def error(
        cls, status: int, message: str, code: str = "error", headers: Mapping[str, str] | None = None
    ) -> Reply:
        """Any status with an OpenAI-style error body."""
        body = json.dumps({"error": {"message": message, "type": code, "param": None, "code": code}})
        return cls(status=status, headers=dict(headers or {}), body=body)

    @classmethod
    def slow(cls, seconds: float, content: str = "too late") -> Reply:
        """A correct reply that arrives after `seconds` (beyond the client's timeout)."""
        return cls(content=content, delay=seconds)

    @classmethod
    def malformed(cls, body: str = '{"id": "chatcmpl-broken", "choices": [') -> Reply:
        """A 200 whose JSON body is cut off."""
        return cls(body=body)


@dataclass
class RecordedRequest:
    """One request as received; credentials are reduced to `authorized`.

    `started`/`finished` are `time.monotonic()` values (finished stays None while in flight).
    """

    endpoint: str
    path: str
    query: dict[str, list[str]]
    body: Any
    model: str | None
    authorized: bool
    started: float
    finished: float | None = None


ChatHandler = Callable[[dict[str, Any]], "str | Reply"]
EmbeddingHandler = Callable[[dict[str, Any]], "list[list[float]] | Reply"]


def bag_of_words_embedding(text: str, dim: int = 256) -> list[float]:
    """A unit vector of signed hashed word counts: deterministic, and similar texts are close."""
    vector = [0.0] * dim
    words = re.findall(r"\w+", text.lower()) or [""]
    for word in words:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        number = int.from_bytes(digest, "little")
        vector[number % dim] += 1.0 if (number >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def count_tokens(text: str) -> int:
    """A stand-in tokenizer: words and punctuation marks."""
    return len(_WORD.findall(text))


class FakeOpenAIServer:
    """Threaded loopback server; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        chat_text: str = "ok",
        embedding_dim: int = 256,
        expected_api_key: str | None = None,
    ) -> None:
        self.latency = latency
        self.chat_text = chat_text
        self.embedding_dim = embedding_dim
        self._expected_api_key = expected_api_key
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._queues: dict[str, deque[str | Reply | list[list[float]]]] = {e: deque() for e in ENDPOINTS}
        self._handlers: dict[str, Callable[[dict[str, Any]], Any] | None] = dict.fromkeys(ENDPOINTS)
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._connections = 0
        self.handler_errors: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (an Azure endpoint)."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`…/v1`) to give the SDK or `OPENAI_BASE_URL`."""
        return self.url + "/v1"

    # -- scripting -------------------------------------------------------------------------

    def enqueue(self, *replies: str | Reply | list[list[float]], endpoint: str = "chat") -> None:
        """Queue replies served in order to the next requests of `endpoint` before any handler."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}")
        with self._lock:
            self._queues[endpoint].extend(replies)

    def set_chat_handler(self, handler: ChatHandler | None) -> None:
        """`handler(request_json) -> str | Reply`, called from server threads (must be thread-safe)."""
        self._handlers["chat"] = handler

    def set_embedding_handler(self, handler: EmbeddingHandler | None) -> None:
        """`handler(request_json) -> vectors | Reply`, called from server threads."""
        self._handlers["embeddings"] = handler

    # -- observations ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def count(self, endpoint: str | None = None) -> int:
        """Requests received (all, or for one endpoint)."""
        with self._lock:
            return sum(1 for r in self._requests if endpoint is None or r.endpoint == endpoint)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def connections(self) -> int:
        """TCP connections accepted since start (kept-alive connections count once)."""
        with self._lock:
            return self._connections

    def _accepted(self) -> None:
        with self._lock:
            self._connections += 1

    def reset(self) -> None:
        """Forget the log, queues and peak concurrency (handlers and latency stay)."""
        with self._lock:
            self._requests.clear()
            for queue in self._queues.values():
                queue.clear()
            self.max_in_flight = 0
            self.handler_errors.clear()

    # -- serving (called from handler threads) ---------------------------------------------

    def _authorized(self, headers: Mapping[str, str]) -> bool:
        bearer = headers.get("authorization", "")
        presented = bearer[7:] if bearer.lower().startswith("bearer ") else headers.get("api-key", "")
        if self._expected_api_key is not None:
            return presented == self._expected_api_key
        return bool(presented)

    def _begin(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _end(self, record: RecordedRequest) -> None:
        with self._lock:
            self._in_flight -= 1
            record.finished = time.monotonic()

    def _next_reply(self, endpoint: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queues[endpoint].popleft() if self._queues[endpoint] else None
        handler = self._handlers[endpoint]
        if queued is None and handler is not None:
            try:
                queued = handler(body)
            except Exception as exc:  # a broken test handler shows up as a 500 and in handler_errors
                self.handler_errors.append(f"{type(exc).__name__}: {exc}")
                return Reply.server_error()
        if isinstance(queued, Reply):
            return queued
        if endpoint == "chat":
            return Reply(content=self.chat_text if queued is None else str(queued))
        if isinstance(queued, str):
            raise TypeError("an embeddings reply must be a list of vectors, not text")
        return Reply(embeddings=queued)

    def _respond(self, endpoint: str, body: dict[str, Any], reply: Reply) -> tuple[int, dict[str, str], str]:
        headers = {"content-type": "application/json", **reply.headers}
        if reply.body is not None:
            return reply.status, headers, reply.body
        if endpoint == "chat":
            payload = self._chat_payload(body, reply)
        else:
            payload = self._embeddings_payload(body, reply)
        return reply.status, headers, json.dumps(payload)

    def _chat_payload(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        text = reply.content if reply.content is not None else self.chat_text
        prompt = sum(count_tokens(_message_text(m)) for m in body.get("messages") or [])
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt
        completion = reply.completion_tokens if reply.completion_tokens is not None else count_tokens(text)
        return {
            "id": f"chatcmpl-fake-{self.count()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            },
        }

    def _embeddings_payload(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw or []]
        vectors = reply.embeddings or [bag_of_words_embedding(t, self.embedding_dim) for t in texts]
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if as_base64 else v,
            }
            for i, v in enumerate(vectors)
        ]
        tokens = reply.prompt_tokens if reply.prompt_tokens is not None else sum(map(count_tokens, texts))
        return {
            "object": "list",
            "data": data,
            "model": body.get("model") or "fake-embedding",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else json.dumps(content)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # bursts of concurrent clients must not be refused
    fake: FakeOpenAIServer

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Called for every accepted connection: counted, so tests can prove none was made."""
        self.fake._accepted()
        return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints
    timeout = 30  # idle keep-alive connections release their thread
    disable_nagle_algorithm = True  # small replies on kept-alive connections must not wait ~40 ms for ACKs
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_POST(self) -> None:
        fake = self.server.fake
        url = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        endpoint = next(
            (
                e
                for e in ENDPOINTS
                if url.path.endswith("/chat/completions" if e == "chat" else "/embeddings")
            ),
            "unknown",
        )
        deployment = re.search(r"/deployments/([^/]+)/", url.path)
        record = RecordedRequest(
            endpoint=endpoint,
            path=url.path,
            query=parse_qs(url.query),
            body=body,
            model=(body or {}).get("model") if isinstance(body, dict) else None,
            authorized=fake._authorized({k.lower(): v for k, v in self.headers.items()}),
            started=time.monotonic(),
        )
        if record.model is None and deployment:
            record.model = deployment.group(1)
        fake._begin(record)
        try:
            if not record.authorized:
                status, headers, text = fake._respond(
                    endpoint, {}, Reply.error(401, "Incorrect API key provided", "invalid_api_key")
                )
            elif endpoint == "unknown":
                status, headers, text = fake._respond(
                    endpoint, {}, Reply.error(404, f"Unknown path {url.path}", "not_found")
                )
            elif not isinstance(body, dict):
                status, headers, text = fake._respond(
                    endpoint, {}, Reply.bad_request("Request body is not a JSON object")
                )
            else:
                reply = fake._next_reply(endpoint, body)
                if fake._stopping.wait(fake.latency + reply.delay):
                    return
                status, headers, text = fake._respond(endpoint, body, reply)
            self._send(status, headers, text.encode("utf-8"))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer
        finally:
            fake._end(record)

    def _send(self, status: int, headers: Mapping[str, str], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
