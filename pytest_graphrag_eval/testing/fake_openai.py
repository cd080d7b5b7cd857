"""A real OpenAI-compatible HTTP server on 127.0.0.1, so the official SDK is tested over real sockets.

Chat, embeddings and the Batch API (also under Azure's paths); replies come from a queue, then a
handler, then defaults, and faults are replies too. The request log never keeps the API key.

    with FakeOpenAIServer(latency=0.1) as server:
        server.enqueue(Reply.rate_limited(retry_after=1), "the answer")
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
"""

from __future__ import annotations

import base64
import contextlib
import email.parser
import email.policy
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.llm.estimate import approximate_tokens

ENDPOINTS = ("chat", "embeddings")
_DIRECT_PATHS = {"chat": "/chat/completions", "embeddings": "/embeddings"}
_BATCH_URLS = {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings"}
_BATCH_PATH = re.compile(r"/v1/(files|batches)(?:/([^/]+)(?:/(content|cancel))?)?$")


@dataclass(frozen=True)
class Reply:
    """A scripted reply: a 200 with `content` or `embeddings` by default; `body` replaces the whole body."""

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
        name = "retry-after-ms" if millis else "retry-after"
        headers = {} if retry_after is None else {name: str(retry_after)}
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
    """One request as received; credentials are reduced to `authorized`."""

    endpoint: str
    path: str
    query: dict[str, list[str]]
    body: JSONValue
    model: str | None
    authorized: bool
    started: float
    finished: float | None = None


ChatHandler = Callable[[dict[str, JSONValue]], "str | Reply"]
EmbeddingHandler = Callable[[dict[str, JSONValue]], "list[list[float]] | Reply"]


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


class FakeOpenAIServer:
    """Threaded loopback server; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        chat_text: str = "ok",
        expected_api_key: str | None = None,
    ) -> None:
        self.latency = latency
        self.chat_text = chat_text
        self._expected_api_key = expected_api_key
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._queues: dict[str, deque[str | Reply | list[list[float]]]] = {e: deque() for e in ENDPOINTS}
        self._handlers: dict[str, ChatHandler | EmbeddingHandler | None] = dict.fromkeys(ENDPOINTS)
        self._requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # TCP connections accepted since start (kept-alive connections count once)
        self.handler_errors: list[str] = []
        self.batch_in_progress_polls = 0
        self.batch_outcome = "completed"
        self.batch_answered: int | None = None  # lines an expired or cancelled batch answered (None: half)
        self._files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, content)
        self._batches: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

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

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def count(self, endpoint: str | None = None) -> int:
        """Requests received (all, or for one endpoint)."""
        with self._lock:
            return sum(1 for r in self._requests if endpoint is None or r.endpoint == endpoint)

    def batch(self, batch_id: str) -> dict[str, Any]:
        """A batch as the server last reported it (tests read its status and counts)."""
        with self._lock:
            return dict(self._batches[batch_id])

    def reset(self) -> None:
        """Forget the log, queues and peak concurrency (handlers and latency stay)."""
        with self._lock:
            self._requests.clear()
            for queue in self._queues.values():
                queue.clear()
            self.max_in_flight = 0
            self.handler_errors.clear()

    @contextlib.contextmanager
    def _serving(self, record: RecordedRequest, headers: Mapping[str, str]) -> Iterator[RecordedRequest]:
        """Log the request (credentials only as whether they were accepted) and count it in flight until
        answered; a client that gave up (a timeout) gets no answer."""
        bearer = headers.get("authorization", "")
        presented = bearer[7:] if bearer.lower().startswith("bearer ") else headers.get("api-key", "")
        expected = self._expected_api_key
        record.authorized = bool(presented) if expected is None else presented == expected
        with self._lock:
            self._requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield record
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.in_flight -= 1
                record.finished = time.monotonic()

    def _next_reply(self, endpoint: str, body: dict[str, JSONValue]) -> Reply:
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

    def _respond(
        self, endpoint: str, body: dict[str, JSONValue], reply: Reply
    ) -> tuple[int, dict[str, str], str]:
        headers = {"content-type": "application/json", **reply.headers}
        if reply.body is not None:
            return reply.status, headers, reply.body
        payload = (
            self._chat_payload(body, reply) if endpoint == "chat" else self._embeddings_payload(body, reply)
        )
        return reply.status, headers, json.dumps(payload)

    def _chat_payload(self, body: dict[str, JSONValue], reply: Reply) -> dict[str, object]:
        text = reply.content if reply.content is not None else self.chat_text
        messages = body.get("messages")
        prompt = sum(
            approximate_tokens(_message_text(m)) for m in (messages if isinstance(messages, list) else [])
        )
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt
        completion = (
            reply.completion_tokens if reply.completion_tokens is not None else approximate_tokens(text)
        )
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

    def _embeddings_payload(self, body: dict[str, JSONValue], reply: Reply) -> dict[str, object]:
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw] if isinstance(raw, list) else []
        vectors = reply.embeddings or [bag_of_words_embedding(t) for t in texts]
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if as_base64 else v,
            }
            for i, v in enumerate(vectors)
        ]
        tokens = (
            reply.prompt_tokens if reply.prompt_tokens is not None else sum(map(approximate_tokens, texts))
        )
        return {
            "object": "list",
            "data": data,
            "model": body.get("model") or "fake-embedding",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}-fake-{next(self._ids)}"

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, object]]:
        """`POST /v1/files`: a multipart form with `purpose` and `file`."""
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"content-type: {content_type}\r\n\r\n".encode() + raw
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts() if message.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename(), payload)
        if "file" not in fields or "purpose" not in fields:
            return 400, _error_body("expected a multipart form with 'file' and 'purpose'")
        file_id = self._new_id("file")
        purpose = fields["purpose"][1].decode()
        with self._lock:
            self._files[file_id] = (purpose, fields["file"][1])
        return 200, {
            "id": file_id,
            "object": "file",
            "bytes": len(fields["file"][1]),
            "created_at": int(time.time()),
            "filename": fields["file"][0] or "upload.jsonl",
            "purpose": purpose,
            "status": "processed",
        }

    def _file_content(self, file_id: str) -> bytes | None:
        with self._lock:
            stored = self._files.get(file_id)
        return stored[1] if stored is not None else None

    def _create_batch(self, body: dict[str, JSONValue]) -> tuple[int, dict[str, object]]:
        """`POST /v1/batches`: validated now, run when a status request finds it finished."""
        content = self._file_content(str(body.get("input_file_id")))
        if content is None:
            return 404, _error_body(f"No such File object: {body.get('input_file_id')}")
        if body.get("endpoint") not in _BATCH_URLS or body.get("completion_window") != "24h":
            return 400, _error_body("endpoint must be a supported URL and completion_window '24h'")
        batch_id = self._new_id("batch")
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": content.count(b"\n"), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
            "polls": 0,
        }
        with self._lock:
            self._batches[batch_id] = batch
        return 200, _public(batch)

    def _batch_status(self, batch_id: str, cancel: bool = False) -> tuple[int, dict[str, object]]:
        """`GET /v1/batches/{id}` (each one a poll) or `POST /v1/batches/{id}/cancel`."""
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                return 404, _error_body(f"No such Batch object: {batch_id}")
            if batch["status"] in ("validating", "in_progress"):
                batch["polls"] += 1
                finishing = cancel or batch["polls"] > self.batch_in_progress_polls
                batch["status"] = "finishing" if finishing else "in_progress"
            run = batch["status"] == "finishing"
        if run:
            self._run_batch(batch, "cancelled" if cancel else self.batch_outcome)
        with self._lock:
            return 200, _public(batch)

    def _run_batch(self, batch: dict[str, Any], outcome: str) -> None:
        """Answer the batch's lines as direct calls would be answered; write its output and error files."""
        lines = [
            json.loads(line) for line in (self._file_content(batch["input_file_id"]) or b"").splitlines()
        ]
        if outcome == "failed":
            errors = {"object": "list", "data": [{"code": "invalid_request", "message": "scripted failure"}]}
            with self._lock:
                batch.update(status="failed", errors=errors, failed_at=int(time.time()))
            return
        answered = len(lines)
        if outcome in ("expired", "cancelled"):
            answered = self.batch_answered if self.batch_answered is not None else len(lines) // 2
        output: list[dict[str, object]] = []
        failed: list[dict[str, object]] = []
        for number, line in enumerate(lines):
            record = {"id": f"batch_req_{number}", "custom_id": line.get("custom_id"), "response": None}
            if number >= answered:
                code = f"batch_{outcome}"
                failed.append(
                    {**record, "error": {"code": code, "message": f"This request was not run: {code}"}}
                )
                continue
            endpoint = _BATCH_URLS.get(str(line.get("url")), "unknown")
            body = line.get("body") if isinstance(line.get("body"), dict) else {}
            if endpoint == "unknown":
                status, text = 400, json.dumps(_error_body(f"unsupported url {line.get('url')}"))
            else:
                status, _headers, text = self._respond(endpoint, body, self._next_reply(endpoint, body))
            try:
                reply_body = json.loads(text)
            except ValueError:
                reply_body = text
            record["response"] = {"status_code": status, "request_id": f"req_{number}", "body": reply_body}
            (output if status == 200 else failed).append({**record, "error": None})
        output_id = self._store_output(output)
        error_id = self._store_output(failed)
        with self._lock:
            batch.update(
                status=outcome,
                output_file_id=output_id,
                error_file_id=error_id,
                request_counts={"total": len(lines), "completed": len(output), "failed": len(failed)},
                **{f"{outcome}_at": int(time.time())},
            )

    def _store_output(self, records: list[dict[str, object]]) -> str | None:
        if not records:
            return None
        file_id = self._new_id("file")
        with self._lock:
            self._files[file_id] = ("batch_output", "".join(json.dumps(r) + "\n" for r in records).encode())
        return file_id


def _error_body(message: str) -> dict[str, object]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def _public(batch: dict[str, Any]) -> dict[str, object]:
    """A batch as the API shows it: the poll counter is the server's own."""
    shown = {key: value for key, value in batch.items() if key != "polls"}
    shown["status"] = "in_progress" if batch["status"] == "finishing" else batch["status"]
    return shown


def _json_or_none(raw: bytes) -> JSONValue:
    """A request's JSON body (`{}` when empty), None when it is not JSON."""
    try:
        body: JSONValue = json.loads(raw or b"{}")
    except ValueError:
        return None
    return body


def _model_of(body: JSONValue) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


def _message_text(message: JSONValue) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else json.dumps(content)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # bursts of concurrent clients must not be refused
    fake: FakeOpenAIServer

    def verify_request(self, request: object, client_address: object) -> bool:
        """Called for every accepted connection: counted, so tests can prove none was made."""
        with self.fake._lock:
            self.fake.connections += 1
        return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints
    timeout = 30  # idle keep-alive connections release their thread
    disable_nagle_algorithm = True  # small replies on kept-alive connections must not wait ~40 ms for ACKs
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        """The Batch API's reads: a batch's status, a file's content."""
        self._batch_api("GET", b"")

    def do_POST(self) -> None:
        fake = self.server.fake
        url = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if _BATCH_PATH.search(url.path):
            self._batch_api("POST", raw)
            return
        body = _json_or_none(raw)
        endpoint = next((name for name, end in _DIRECT_PATHS.items() if url.path.endswith(end)), "unknown")
        deployment = re.search(r"/deployments/([^/]+)/", url.path)
        model = _model_of(body)
        if model is None and deployment:
            model = deployment.group(1)
        record = RecordedRequest(
            endpoint, url.path, parse_qs(url.query), body, model, False, time.monotonic()
        )
        with fake._serving(record, self._headers()):
            if not record.authorized:
                reply = Reply.error(401, "Incorrect API key provided", "invalid_api_key")
            elif endpoint == "unknown":
                reply = Reply.error(404, f"Unknown path {url.path}", "not_found")
            elif not isinstance(body, dict):
                reply = Reply.bad_request("Request body is not a JSON object")
            else:
                reply = fake._next_reply(endpoint, body)
                if fake._stopping.wait(fake.latency + reply.delay):
                    return
            # An error reply has its own body: the request's is read only for a scripted answer.
            status, headers, text = fake._respond(endpoint, body if isinstance(body, dict) else {}, reply)
            self._send(status, headers, text.encode("utf-8"))

    def _batch_api(self, method: str, raw: bytes) -> None:
        """Files and batches; logged as files, file_content, batches, batch_status, batch_cancel."""
        fake = self.server.fake
        path = urlsplit(self.path).path
        match = _BATCH_PATH.search(path)
        kind, ident, action = match.groups() if match else ("", None, None)
        if ident is None:
            endpoint = kind if method == "POST" else "unknown"  # uploads and new batches
        else:
            endpoint = {
                ("GET", "files", "content"): "file_content",
                ("GET", "batches", None): "batch_status",
                ("POST", "batches", "cancel"): "batch_cancel",
            }.get((method, kind, action), "unknown")
        body = _json_or_none(raw) if endpoint == "batches" else None
        record = RecordedRequest(endpoint, path, {}, body, None, False, time.monotonic())
        with fake._serving(record, self._headers()):
            status, payload = 404, _error_body(f"Unknown path {path}")
            if not record.authorized:
                status, payload = 401, _error_body("Incorrect API key provided")
            elif endpoint == "files":
                status, payload = fake._upload(self.headers.get("content-type", ""), raw)
            elif endpoint == "batches":
                status, payload = (
                    fake._create_batch(body) if isinstance(body, dict) else (400, _error_body("not JSON"))
                )
            elif endpoint in ("batch_status", "batch_cancel"):
                status, payload = fake._batch_status(str(ident), cancel=endpoint == "batch_cancel")
            elif endpoint == "file_content":
                content = fake._file_content(str(ident))
                if content is not None:
                    self._send(200, {"content-type": "application/octet-stream"}, content)
                    return
                status, payload = 404, _error_body(f"No such File object: {ident}")
            self._send(status, {"content-type": "application/json"}, json.dumps(payload).encode())

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _send(self, status: int, headers: Mapping[str, str], payload: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
