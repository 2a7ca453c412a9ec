"""The service's HTTP API over its Unix socket (docs/api.md), one request
at a time on one persistent connection, and the start of `haven serve`
when nothing listens on the socket."""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Tuple, Union

from .errors import ConnectionLost, HavenError, ProtocolError, ServiceStartError, error_from_response

# The log the SDK gives a service it starts (its stderr), next to the socket.
SERVE_LOG_NAME = "serve.log"
# Held (flock) while one client starts the service, so that clients starting
# at once start one service: the others wait, then find it listening.
START_LOCK_NAME = "serve.lock"
# How much of that log a failed start quotes.
_LOG_TAIL_BYTES = 4096

_UNSET: Any = object()


def default_socket_path() -> str:
    """Where the service listens: $HAVEN_SOCKET, else root's
    /run/haven/haven.sock, else $XDG_RUNTIME_DIR/haven/haven.sock
    (/run/user/UID/haven/haven.sock without an absolute XDG_RUNTIME_DIR),
    as `haven serve` chooses its own."""
    env = os.environ.get("HAVEN_SOCKET")
    if env:
        return env
    if os.geteuid() == 0:
        return "/run/haven/haven.sock"
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if not xdg.startswith("/"):
        xdg = "/run/user/%d" % os.geteuid()
    return os.path.join(xdg, "haven", "haven.sock")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket.  The Host header is "localhost"
    (the service requires one and ignores its value)."""

    def __init__(self, path: str, timeout: Optional[float] = None) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def _socket_answers(path: str) -> bool:
    """Whether a service listens on path.  A full backlog (EAGAIN) or a slow
    accept is a listener too; a missing socket, a refused connection or any
    other error is none (yet)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(1.0)
        sock.connect(path)
        return True
    except (BlockingIOError, socket.timeout):
        return True
    except OSError:
        return False
    finally:
        sock.close()


def _find_binary() -> str:
    env = os.environ.get("HAVEN_BIN")
    if env:
        return env
    found = shutil.which("haven")
    if not found:
        raise ServiceStartError(
            "the service is not running and no haven binary was found (set HAVEN_BIN or PATH)",
            code="start_failed",
        )
    return found


def _log_tail(path: str, start: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            begin = max(start, end - _LOG_TAIL_BYTES)
            f.seek(begin)
            return f.read().decode("utf-8", "replace").strip()
    except OSError as e:
        return "(its log %s cannot be read: %s)" % (path, e.strerror)


def _lock_start(sock_dir: str, deadline: float) -> int:
    path = os.path.join(sock_dir, START_LOCK_NAME)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise ServiceStartError("cannot open %s: %s" % (path, e.strerror), code="start_failed") from e
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise ServiceStartError(
                    "another client has been starting the service for too long (%s is held)" % path,
                    code="start_failed",
                ) from None
            time.sleep(0.01)


def start_service(socket_path: str, timeout: float = 15.0, binary: Optional[str] = None) -> None:
    """Start `haven serve --socket PATH` detached (its own session, stdin and
    stdout on /dev/null, stderr appended to serve.log beside the socket) and
    wait until the socket accepts a connection, at most `timeout` seconds.
    Clients that start it at once start one: each holds serve.lock beside
    the socket while it starts the service, and one that finds the service
    listening once it holds the lock starts nothing.

    Raises ServiceStartError with the log's tail when it does not come up."""
    binary = binary or _find_binary()
    deadline = time.monotonic() + timeout
    sock_dir = os.path.dirname(os.path.abspath(socket_path))
    # The service wants its socket's directory private; make it so if it
    # does not exist yet (its parents are the caller's business).
    try:
        os.makedirs(sock_dir, mode=0o700, exist_ok=True)
    except OSError as e:
        raise ServiceStartError(
            "cannot make the socket's directory %s: %s" % (sock_dir, e.strerror), code="start_failed"
        ) from e
    lock_fd = _lock_start(sock_dir, deadline)
    try:
        if _socket_answers(socket_path):
            return
        _spawn_and_wait(binary, socket_path, sock_dir, deadline, timeout)
    finally:
        os.close(lock_fd)


def _spawn_and_wait(binary: str, socket_path: str, sock_dir: str, deadline: float, timeout: float) -> None:
    log_path = os.path.join(sock_dir, SERVE_LOG_NAME)
    try:
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise ServiceStartError("cannot open %s: %s" % (log_path, e.strerror), code="start_failed") from e
    try:
        log_start = os.fstat(log_fd).st_size
        try:
            proc = subprocess.Popen(
                [binary, "serve", "--socket", socket_path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_fd,
                close_fds=True,
                start_new_session=True,
            )
        except OSError as e:
            raise ServiceStartError("cannot start %s serve: %s" % (binary, e.strerror), code="start_failed") from e
    finally:
        os.close(log_fd)
    # The service stays this process's child: a thread reaps it whenever it
    # ends so it never lingers as a zombie.
    threading.Thread(target=proc.wait, name="haven-serve-reaper", daemon=True).start()

    exited_at: Optional[float] = None
    while True:
        if _socket_answers(socket_path):
            return
        now = time.monotonic()
        if proc.returncode is not None and exited_at is None:
            exited_at = now
        # A failed start ends the process: give up soon after, but a service
        # that forks itself away exits 0 and gets the whole wait.
        if exited_at is not None and proc.returncode != 0 and now - exited_at > 0.5:
            raise ServiceStartError(
                "%s serve --socket %s exited with status %s; %s:\n%s"
                % (binary, socket_path, proc.returncode, log_path, _log_tail(log_path, log_start)),
                code="start_failed",
            )
        if now >= deadline:
            raise ServiceStartError(
                "%s serve --socket %s did not answer within %.0f s; %s:\n%s"
                % (binary, socket_path, timeout, log_path, _log_tail(log_path, log_start)),
                code="start_failed",
            )
        time.sleep(0.01)


def _quote_path(path: str) -> str:
    return urllib.parse.quote(path, safe="/")


def _json_body(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _decode_json(data: bytes, what: str) -> Dict[str, Any]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError("%s: the answer is not JSON: %s" % (what, e), code="protocol") from e
    if not isinstance(doc, dict):
        raise ProtocolError("%s: the answer is not a JSON object" % what, code="protocol")
    return doc


class Client:
    """One connection to the service.  Requests go one at a time (a lock
    serialises threads); the connection is kept open between them, which
    matters to a sandbox created with destroy_on_disconnect.

    socket: the socket's path (default: default_socket_path()).
    autostart: start `haven serve` when nothing listens there.
    timeout: seconds a request other than a run may wait for its answer
    (None: no limit); a run waits as long as the service lets it run."""

    def __init__(
        self,
        socket: Optional[str] = None,
        *,
        autostart: bool = True,
        start_timeout: float = 15.0,
        timeout: Optional[float] = 120.0,
    ) -> None:
        self.socket_path = socket or default_socket_path()
        self.autostart = autostart
        self.start_timeout = start_timeout
        self.timeout = timeout
        self._conn = UnixHTTPConnection(self.socket_path, timeout=timeout)
        self._lock = threading.RLock()
        self._open_stream: Optional[http.client.HTTPResponse] = None

    # -- the connection ---------------------------------------------------

    def connect(self) -> None:
        """Open the connection now (requests open it when needed), starting
        the service if nothing listens on the socket."""
        with self._lock:
            if self._conn.sock is not None:
                return
            try:
                self._connect_retrying()
            except (FileNotFoundError, ConnectionRefusedError) as e:
                if not self.autostart:
                    raise ServiceStartError(
                        "nothing listens on %s: %s" % (self.socket_path, e.strerror), code="start_failed"
                    ) from e
                start_service(self.socket_path, self.start_timeout)
                self._connect_retrying()
            except OSError as e:
                raise ConnectionLost(
                    "cannot connect to %s: %s" % (self.socket_path, e.strerror or e), code="disconnected"
                ) from e

    def _connect_retrying(self) -> None:
        # A listener whose backlog is full answers EAGAIN at once (a Unix
        # socket does not wait for room): try again for a while.
        deadline = time.monotonic() + (self.timeout if self.timeout is not None else 60.0)
        delay = 0.001
        while True:
            try:
                self._conn.connect()
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    @property
    def connected(self) -> bool:
        return self._conn.sock is not None

    def close(self) -> None:
        """Close the connection (a sandbox it created with
        destroy_on_disconnect is destroyed by the service)."""
        with self._lock:
            self._open_stream = None
            self._conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- requests ---------------------------------------------------------

    def _send(
        self, method: str, path: str, body: Optional[bytes], content_type: Optional[str], timeout: Any
    ) -> http.client.HTTPResponse:
        if self._open_stream is not None:
            raise HavenError(
                "a streamed run is still being read on this connection", code="busy"
            )
        self.connect()
        headers = {}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        try:
            if self._conn.sock is not None:
                self._conn.sock.settimeout(self.timeout if timeout is _UNSET else timeout)
            self._conn.request(method, path, body=body, headers=headers)
            return self._conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            self._conn.close()
            raise ConnectionLost(
                "%s %s: the connection to %s broke: %s" % (method, path, self.socket_path, e), code="disconnected"
            ) from e

    def request(
        self,
        method: str,
        path: str,
        body: Optional[bytes] = None,
        *,
        content_type: Optional[str] = None,
        timeout: Any = _UNSET,
    ) -> Tuple[int, bytes]:
        """Send one request and read its whole answer: (status, body).  An
        error status raises the matching HavenError."""
        with self._lock:
            resp = self._send(method, path, body, content_type, timeout)
            try:
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                self._conn.close()
                raise ConnectionLost(
                    "%s %s: the answer broke off: %s" % (method, path, e), code="disconnected"
                ) from e
            if resp.status >= 400:
                raise error_from_response(resp.status, data)
            return resp.status, data

    def request_json(self, method: str, path: str, obj: Any = None, *, timeout: Any = _UNSET) -> Dict[str, Any]:
        body = None if obj is None else _json_body(obj)
        _, data = self.request(method, path, body, timeout=timeout)
        return _decode_json(data, "%s %s" % (method, path))

    def request_lines(self, method: str, path: str, obj: Any, *, timeout: Any = _UNSET) -> "LineStream":
        """A streamed answer (NDJSON): each line as a JSON object, as it
        comes.  The connection carries nothing else until the stream is
        read to its end or closed (closing reads and drops the rest)."""
        with self._lock:
            resp = self._send(method, path, _json_body(obj), None, timeout)
            if resp.status >= 400:
                raise error_from_response(resp.status, resp.read())
            stream = LineStream(self, resp, "%s %s" % (method, path))
            self._open_stream = resp
        return stream

    # -- the API (docs/api.md) --------------------------------------------

    def version(self) -> Dict[str, Any]:
        return self.request_json("GET", "/v1/version")

    def create_sandbox(
        self,
        policy: str,
        *,
        project: Optional[str] = None,
        pool: bool = True,
        destroy_on_disconnect: bool = False,
        idle_timeout: Optional[int] = None,
    ) -> Dict[str, Any]:
        req: Dict[str, Any] = {"policy": policy, "pool": pool, "destroy_on_disconnect": destroy_on_disconnect}
        if project is not None:
            req["project"] = project
        if idle_timeout is not None:
            req["idle_timeout_s"] = int(idle_timeout)
        return self.request_json("POST", "/v1/sandboxes", req)

    def list_sandboxes(self) -> List[Dict[str, Any]]:
        doc = self.request_json("GET", "/v1/sandboxes")
        boxes = doc.get("sandboxes")
        if not isinstance(boxes, list):
            raise ProtocolError("GET /v1/sandboxes: no \"sandboxes\" list", code="protocol")
        return boxes

    def get_sandbox(self, sandbox_id: str) -> Dict[str, Any]:
        return self.request_json("GET", "/v1/sandboxes/" + _quote_path(sandbox_id))

    def delete_sandbox(self, sandbox_id: str) -> Dict[str, Any]:
        return self.request_json("DELETE", "/v1/sandboxes/" + _quote_path(sandbox_id))

    def run(self, sandbox_id: str, request: Dict[str, Any]) -> Dict[str, Any]:
        # No socket timeout: the service ends the run at its time limit.
        return self.request_json("POST", "/v1/sandboxes/%s/run" % _quote_path(sandbox_id), request, timeout=None)

    def run_stream(self, sandbox_id: str, request: Dict[str, Any]) -> "LineStream":
        req = dict(request)
        req["stream"] = True
        return self.request_lines("POST", "/v1/sandboxes/%s/run" % _quote_path(sandbox_id), req, timeout=None)

    def put_file(self, sandbox_id: str, path: str, data: Union[bytes, str]) -> Dict[str, Any]:
        if isinstance(data, str):
            data = data.encode("utf-8")
        _, body = self.request(
            "PUT",
            "/v1/sandboxes/%s/files/%s" % (_quote_path(sandbox_id), _quote_path(path)),
            bytes(data),
            content_type="application/octet-stream",
        )
        return _decode_json(body, "PUT files/" + path)

    def get_file(self, sandbox_id: str, path: str) -> bytes:
        _, body = self.request("GET", "/v1/sandboxes/%s/files/%s" % (_quote_path(sandbox_id), _quote_path(path)))
        return body

    def list_files(self, sandbox_id: str, path: str = "") -> Dict[str, Any]:
        target = "/v1/sandboxes/%s/list" % _quote_path(sandbox_id)
        if path:
            target += "?path=" + urllib.parse.quote(path, safe="")
        return self.request_json("GET", target)


class LineStream:
    """The lines of a streamed answer, each decoded as a JSON object."""

    def __init__(self, client: Client, resp: http.client.HTTPResponse, what: str) -> None:
        self._client = client
        self._resp = resp
        self._what = what
        self.done = False

    def __iter__(self) -> "LineStream":
        return self

    def __next__(self) -> Dict[str, Any]:
        while not self.done:
            try:
                line = self._resp.readline()
            except (OSError, http.client.HTTPException) as e:
                self._client._conn.close()
                self._finish()
                raise ConnectionLost("%s: the stream broke off: %s" % (self._what, e), code="disconnected") from e
            if not line:
                self._finish()
                break
            if line.strip():
                return _decode_json(line, self._what)
        raise StopIteration

    def close(self) -> None:
        """Read the rest of the answer and drop it (for a run: wait for its end)."""
        if not self.done:
            self._finish()

    def _finish(self) -> None:
        if self.done:
            return
        self.done = True
        try:
            # To the end, so the connection can carry the next request.
            self._resp.read()
        except (OSError, http.client.HTTPException):
            self._client._conn.close()
        finally:
            self._client._open_stream = None


__all__ = [
    "LineStream",
    "Client",
    "UnixHTTPConnection",
    "default_socket_path",
    "start_service",
    "SERVE_LOG_NAME",
]
