"""The remote endpoint: a SPARQL 1.1 Protocol client on the standard library (http.client). Credentials come
from the environment only, and every text quoted from the server has them (and the URL's secret-looking query
values, which servers echo) blanked. Whatever fails is an EndpointError: one bad answer is one question's
error, never the run's. After `BREAKER_FAILURES` requests in a row fail even after their retries, every later
query fails at once instead of waiting out its timeouts."""

from __future__ import annotations

import base64
import http.client
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from datetime import UTC, datetime
from typing import Any

from pytest_graphrag_eval.graph.endpoint import (
    SPARQL_RESULTS_JSON,
    EndpointError,
    EndpointUnavailable,
    QueryForm,
    QueryResult,
)
from pytest_graphrag_eval.graph.rdf_text import canonical_ntriples, solutions_json
from pytest_graphrag_eval.graph.readonly import NO_SERVICE, first_line, import_pyoxigraph, query_form
from pytest_graphrag_eval.graph.service import ServicePolicy

TOKEN_VARIABLE = "GRAPHRAG_SPARQL_TOKEN"
USER_VARIABLE = "GRAPHRAG_SPARQL_USER"
PASSWORD_VARIABLE = "GRAPHRAG_SPARQL_PASSWORD"
DEFAULT_TIMEOUT = 30.0
DEFAULT_CONCURRENCY = 8
DEFAULT_RETRIES = 3
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
BREAKER_FAILURES = 3
_BACKOFF_START = 0.2
_BACKOFF_CAP = 5.0
_RETRY_AFTER_CAP = 30.0
_QUOTED_CHARS = 160
_USER_AGENT = "pytest-graphrag-eval"
_SHORTEST_SECRET = 4
_LONG_VALUE = 8
_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|sig|cred|session|access", re.IGNORECASE)


class _Retryable(Exception):
    """One failed attempt worth another (429, 5xx, a dropped connection, a timeout)."""

    def __init__(self, message: str, retry_after: float | None = None, *, unreachable: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable  # no connection at all: the endpoint's problem, not the query's


class HttpEndpoint:
    """A SPARQL endpoint spoken to over HTTP(S); thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = DEFAULT_RETRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        environ: dict[str, str] | None = None,
        service: ServicePolicy = NO_SERVICE,
    ):
        parts = urllib.parse.urlsplit(url)
        self.shown_url = shown_url(url)
        if parts.username or parts.password:
            raise EndpointError(
                f"the SPARQL endpoint URL {self.shown_url} must not carry credentials: set "
                f"{TOKEN_VARIABLE}, or {USER_VARIABLE} and {PASSWORD_VARIABLE}, in the environment"
            )
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(f"the SPARQL endpoint URL {self.shown_url!r} is not an http(s) URL")
        self._parts = parts
        self._target = parts.path or "/"
        if parts.query:
            self._target += "?" + parts.query
        self.timeout = timeout
        self.retries = retries
        self.max_bytes = max_bytes
        self._headers, self._secrets = _auth_headers(os.environ if environ is None else environ)
        self._secrets.extend(_query_string_secrets(parts.query))
        self.service = service
        self._slots = threading.BoundedSemaphore(concurrency)
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._failures_in_a_row = 0
        self._broken: str | None = None
        self._state = threading.Lock()
        self.first_used_at: str | None = None

    # the endpoint protocol ---------------------------------------------------------------------
    def execute(self, query: str) -> QueryResult:
        """Run one query; whatever fails is an EndpointError with the secrets blanked out."""
        form = query_form(query, self.service)
        try:
            return self._execute(form, query)
        except EndpointError as error:  # EndpointUnavailable stays itself
            raise type(error)(self._redact(str(error))) from None
        except Exception as error:  # the client or a parser failed in a way not foreseen: still one query's
            raise EndpointError(
                self._redact(
                    f"the query to {self.shown_url} failed: {type(error).__name__}: {first_line(error)}"
                )
            ) from None

    def _execute(self, form: QueryForm, query: str) -> QueryResult:
        if self._broken is not None:
            raise EndpointUnavailable(self._broken)
        if self.first_used_at is None:
            self.first_used_at = datetime.now(UTC).isoformat(timespec="seconds")
        body = urllib.parse.urlencode({"query": query}).encode("utf-8")
        started = time.perf_counter()
        with self._slots:
            status, content_type, data = self._request_with_retries(body, form.media_type)
        seconds = time.perf_counter() - started
        return QueryResult(form, self._result_text(form, status, content_type, data), seconds)

    def describe(self) -> dict[str, Any]:
        return {"kind": "http", "url": self.shown_url, "first_query_at": self.first_used_at}

    def close(self) -> None:
        with self._state:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()

    # requests ----------------------------------------------------------------------------------
    def _request_with_retries(self, body: bytes, accept: str) -> tuple[int, str, bytes]:
        delay = _BACKOFF_START
        for attempt in range(self.retries + 1):
            if self._broken is not None:
                raise EndpointUnavailable(self._broken)
            try:
                answer = self._request(body, accept)
            except _Retryable as failure:
                if attempt == self.retries:
                    if failure.unreachable:
                        self._break(str(failure))
                        raise EndpointUnavailable(self._broken or str(failure)) from None
                    self._count_failure(str(failure))
                    raise EndpointError(self._redact(str(failure))) from None
                wait = failure.retry_after if failure.retry_after is not None else delay
                time.sleep(min(wait, _RETRY_AFTER_CAP))
                delay = min(delay * 2, _BACKOFF_CAP)
                continue
            with self._state:
                self._failures_in_a_row = 0
            return answer
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _request(self, body: bytes, accept: str) -> tuple[int, str, bytes]:
        headers = {
            **self._headers,
            "Accept": accept,
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": _USER_AGENT,
        }
        connection = self._connection()
        try:
            connection.request("POST", self._target, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read(self.max_bytes + 1)
            if len(data) > self.max_bytes:
                connection.close()
                raise EndpointError(
                    f"the result from {self.shown_url} is larger than the {self.max_bytes:,}-byte cap"
                )
        except TimeoutError:
            connection.close()
            raise _Retryable(
                f"{self.shown_url} did not answer within the {self.timeout:g} s timeout"
            ) from None
        except socket.gaierror:
            connection.close()
            self._break(f"the host of {self.shown_url} does not resolve (a mistyped URL?)")
            raise EndpointUnavailable(self._broken or "") from None
        except (ConnectionError, http.client.HTTPException, OSError) as error:
            connection.close()
            raise _Retryable(
                f"cannot reach {self.shown_url}: {_transport_reason(error)}",
                unreachable=isinstance(error, ConnectionRefusedError),
            ) from None
        status = response.status
        content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if status == 429 or status >= 500:
            raise _Retryable(
                f"{self.shown_url} answered HTTP {status} {response.reason}: {self._quote(data)}",
                _retry_after(response.getheader("Retry-After")),
            )
        return status, content_type, data

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            host, port = self._parts.hostname or "", self._parts.port
            if self._parts.scheme == "https":
                connection = http.client.HTTPSConnection(
                    host, port, timeout=self.timeout, context=ssl.create_default_context()
                )
            else:
                connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
            self._local.connection = connection
            with self._state:
                self._connections.append(connection)
        return connection

    def _count_failure(self, message: str) -> None:
        with self._state:
            self._failures_in_a_row += 1
            failures = self._failures_in_a_row
        if failures >= BREAKER_FAILURES:
            self._break(
                f"{failures} queries in a row failed after {self.retries} retries each; the last: {message}"
            )

    def _break(self, reason: str) -> None:
        """Open the breaker: from now on every query fails at once with this one message."""
        with self._state:
            if self._broken is None:
                self._broken = self._redact(
                    f"the SPARQL endpoint {self.shown_url} is unavailable ({reason}); "
                    "no further query is sent to it in this run"
                )

    # answers -----------------------------------------------------------------------------------
    def _result_text(self, form: QueryForm, status: int, content_type: str, data: bytes) -> str:
        if status == 401:
            raise EndpointError(
                f"{self.shown_url} answered HTTP 401 (not authorised): "
                + (
                    "the credentials from the environment were refused"
                    if self._headers
                    else f"set {TOKEN_VARIABLE}, or {USER_VARIABLE} and {PASSWORD_VARIABLE}"
                )
            )
        if status == 404:
            raise EndpointError(
                f"{self.shown_url} answered HTTP 404 (not found): is this the endpoint's query URL? "
                f"{self._quote(data)}"
            )
        if status != 200:
            raise EndpointError(f"{self.shown_url} answered HTTP {status}: {self._quote(data)}")
        expected = form.media_type
        accepted = (expected, "application/json" if expected == SPARQL_RESULTS_JSON else "text/plain")
        if content_type not in accepted:
            raise EndpointError(
                f"{self.shown_url} answered {content_type or 'without a content type'}, not {expected} "
                f"(an error page?): {self._quote(data)}"
            )
        pyoxigraph = import_pyoxigraph()
        try:
            if form is QueryForm.CONSTRUCT:
                return canonical_ntriples(pyoxigraph.parse(data, format=pyoxigraph.RdfFormat.N_TRIPLES))
            results = pyoxigraph.parse_query_results(data, format=pyoxigraph.QueryResultsFormat.JSON)
            return solutions_json(results)
        except Exception as error:  # whatever the parser raises on a bad answer
            failure = first_line(error)
        # Raised outside the handler, so the parser's frame (and its results) is not kept as context.
        results = None
        raise EndpointError(
            f"{self.shown_url} answered {content_type} that does not parse ({failure}): {self._quote(data)}"
        )

    def _quote(self, data: bytes) -> str:
        """The start of a server's body, whitespace collapsed, shortened, secrets blanked, as data (repr)."""
        text = " ".join(data[: _QUOTED_CHARS * 8].decode("utf-8", errors="replace").split())
        return repr(self._redact(text)[:_QUOTED_CHARS]) if text else "(empty body)"

    def _redact(self, text: str) -> str:
        """The text with every secret blanked (one shorter than 4 characters would blank ordinary words)."""
        for secret in self._secrets:
            if len(secret) >= _SHORTEST_SECRET:
                text = text.replace(secret, "***")
        return text


def _query_string_secrets(query: str) -> list[str]:
    """The URL's query values that may be secrets (by name, or 8 characters or more), as written and
    decoded, longest first (a shorter one may be part of a longer one)."""
    values: set[str] = set()
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if value and (_SECRET_NAME.search(urllib.parse.unquote_plus(name)) or len(value) >= _LONG_VALUE):
            values.update({value, urllib.parse.unquote_plus(value), urllib.parse.unquote(value)})
    return sorted(values, key=len, reverse=True)


def shown_url(url: str) -> str:
    """The URL as messages and reports show it: no user info, query string or fragment."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "(an invalid URL)"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _auth_headers(environ: Any) -> tuple[dict[str, str], list[str]]:
    """The Authorization header the environment asks for, and every secret to keep out of messages."""
    token = environ.get(TOKEN_VARIABLE)
    if token:
        return {"Authorization": f"Bearer {token}"}, [token]
    user, password = environ.get(USER_VARIABLE), environ.get(PASSWORD_VARIABLE)
    if user or password:
        if not (user and password):
            raise EndpointError(f"set both {USER_VARIABLE} and {PASSWORD_VARIABLE}, or neither")
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {encoded}"}, [password, encoded]
    return {}, []


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _transport_reason(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is the server running, and is the port right?)"
    return first_line(error)
