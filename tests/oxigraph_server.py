"""A real Oxigraph SPARQL server on loopback, and a proxy in front of it that records and misbehaves.

For tests and benchmarks of the remote endpoint: `OxigraphServer` loads RDF files into a fresh
database with the `oxigraph` CLI (the `oxigraph` package on PyPI) and serves it on a free loopback
port. `RecordingProxy` forwards requests to it and records every request's headers and body; a test
can make it answer with an HTML page, a 401, a 429 or a slow reply instead, or echo headers back.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_START_TIMEOUT = 30.0


def oxigraph_cli() -> str:
    """The `oxigraph` executable: next to this Python's executable, else on PATH."""
    beside = Path(sys.executable).parent / "oxigraph"
    found = str(beside) if beside.exists() else shutil.which("oxigraph")
    if not found:
        raise RuntimeError("the oxigraph CLI is not installed: pip install oxigraph")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OxigraphServer:
    """`oxigraph serve` on 127.0.0.1 over a database loaded from `files`; a context manager."""

    def __init__(self, files: Sequence[Path], *, extra_args: Sequence[str] = ()):
        self.files = list(files)
        self.extra_args = list(extra_args)
        self.port = free_port()
        self._folder = tempfile.TemporaryDirectory(prefix="oxigraph-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/query"

    def start(self) -> OxigraphServer:
        location = self._folder.name
        cli = oxigraph_cli()
        if self.files:
            subprocess.run(
                [cli, "load", "--location", location, "--file", *map(str, self.files)],
                check=True,
                capture_output=True,
            )
        self.process = subprocess.Popen(
            [cli, "serve", "--location", location, "--bind", f"127.0.0.1:{self.port}", *self.extra_args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("oxigraph serve exited at start") from None
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("oxigraph serve did not listen in time")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def triple_count(self) -> int:
        """How many triples the server holds (asked directly, not through the plugin)."""
        body = b"query=SELECT%20(COUNT(*)%20AS%20%3Fn)%20WHERE%20%7B%3Fs%20%3Fp%20%3Fo%7D"
        request = urllib.request.Request(self.url, data=body, headers={"Accept": "text/csv"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.read().decode().splitlines()[1])

    def __enter__(self) -> OxigraphServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._folder.cleanup()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (a timeout, a size cap) is what the tests provoke: no traceback."""

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet."""


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Behaviour = Callable[[RecordedRequest], tuple[int, dict[str, str], bytes] | None]
"""Given a request: an answer (status, headers, body) to send instead of forwarding, or None."""


@dataclass
class RecordingProxy:
    """An HTTP proxy on loopback in front of `upstream` (a URL), recording every request."""

    upstream: str
    behaviour: Behaviour | None = None
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                recorded = RecordedRequest(
                    "POST", self.path, dict(self.headers.items()), self.rfile.read(length)
                )
                proxy.requests.append(recorded)
                answer = proxy.behaviour(recorded) if proxy.behaviour else None
                if answer is None:
                    answer = proxy._forward(recorded)
                status, headers, body = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/query"

    def _forward(self, recorded: RecordedRequest) -> tuple[int, dict[str, str], bytes]:
        headers = {
            name: value
            for name, value in recorded.headers.items()
            if name.lower() in ("accept", "content-type")
        }
        request = urllib.request.Request(self.upstream, data=recorded.body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return (
                    response.status,
                    {"Content-Type": response.headers.get("Content-Type", "")},
                    response.read(),
                )
        except urllib.error.HTTPError as error:
            return error.code, {"Content-Type": error.headers.get("Content-Type", "")}, error.read()

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
