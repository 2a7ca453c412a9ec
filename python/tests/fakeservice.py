"""A stand-in of `haven serve` for the SDK's pure tests: the API's routes
(docs/api.md) over a Unix socket, with sandboxes that are only records, so
the tests run anywhere.  It counts connections, records every request and
destroys a sandbox created with destroy_on_disconnect when its connection
closes, as the service does.

Runs come from `runner(sandbox, request) -> dict` (the result JSON) that a
test may replace; the default one plays a small interpreter: probes of
python3/bash/sh exit 0, node is missing (exit 127 with the keeper's
"haven: exec" message), and `python3 FILE` answers the file's text.

Also a program: `python3 fakeservice.py serve --socket PATH` serves until
killed (the tests' stand-in for the haven binary's autostart)."""

from __future__ import annotations

import base64
import http.server
import json
import os
import socketserver
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple


def default_runner(sb: Dict[str, Any], req: Dict[str, Any]) -> Dict[str, Any]:
    argv = req["argv"]
    result = {"exit_code": 0, "stdout": "", "stderr": "", "duration_s": 0.01}
    if argv[0] == "node":
        result.update(exit_code=127, stderr="haven: exec node: No such file or directory\n")
    elif len(argv) == 2 and argv[1] in sb["files"]:
        result["stdout"] = "ran %s: %s" % (argv[0], sb["files"][argv[1]].decode())
    elif argv[:2] == ["echo", "-n"]:
        result["stdout"] = " ".join(argv[2:])
    return result


class FakeService:
    def __init__(self, path: str) -> None:
        self.path = path
        self.sandboxes: Dict[str, Dict[str, Any]] = {}
        self.requests: List[Tuple[str, str, bytes, int]] = []  # method, target, body, connection number
        self.connections = 0
        self.creates = 0
        self.runner: Callable[[Dict[str, Any], Dict[str, Any]], Any] = default_runner
        self.max_sandboxes = 100
        self.lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with fake.lock:
                    fake.connections += 1
                    self.conn_no = fake.connections
                self.owned: List[str] = []

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with fake.lock:
                        for sid in self.owned:
                            fake.sandboxes.pop(sid, None)

            def log_message(self, *args: Any) -> None:
                pass

            def address_string(self) -> str:
                return "unix"

            def _body(self) -> bytes:
                n = int(self.headers.get("Content-Length", "0"))
                return self.rfile.read(n) if n else b""

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _json(self, status: int, obj: Any) -> None:
                self._send(status, json.dumps(obj).encode())

            def _error(self, status: int, code: str, message: str) -> None:
                self._json(status, {"error": {"code": code, "message": message}})

            def _handle(self) -> None:
                body = self._body()
                with fake.lock:
                    fake.requests.append((self.command, self.path, body, self.conn_no))
                if self.headers.get("Host") is None:
                    return self._error(400, "bad_request", "no Host header")
                url = urllib.parse.urlsplit(self.path)
                parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
                if parts[:1] != ["v1"]:
                    return self._error(404, "not_found", "no such route")
                rest = parts[1:]
                if rest == ["version"]:
                    return self._json(200, {"api": 1})
                if rest == ["sandboxes"] and self.command == "POST":
                    return self._create(body)
                if rest == ["sandboxes"] and self.command == "GET":
                    return self._json(200, {"sandboxes": [dict(id=k, policy=v["policy"]) for k, v in fake.sandboxes.items()]})
                if len(rest) < 2 or rest[0] != "sandboxes":
                    return self._error(404, "not_found", "no such route")
                sb = fake.sandboxes.get(rest[1])
                if sb is None:
                    return self._error(404, "not_found", "no sandbox %s" % rest[1])
                if len(rest) == 2 and self.command == "DELETE":
                    with fake.lock:
                        fake.sandboxes.pop(rest[1], None)
                    return self._json(200, {"id": rest[1], "destroyed": True, "notes": []})
                if len(rest) == 2 and self.command == "GET":
                    return self._json(200, {"id": rest[1], "policy": sb["policy"], "runs": sb["runs"]})
                if rest[2:3] == ["run"] and self.command == "POST":
                    return self._run(sb, body)
                if rest[2:3] == ["files"]:
                    name = "/".join(rest[3:])
                    if self.command == "PUT":
                        sb["files"][name] = body
                        return self._json(200, {"path": name, "size": len(body)})
                    if name not in sb["files"]:
                        return self._error(404, "not_found", "%s: no such file" % name)
                    return self._send(200, sb["files"][name], "application/octet-stream")
                if rest[2:3] == ["list"]:
                    q = urllib.parse.parse_qs(url.query).get("path", [""])[0]
                    entries = [{"name": n, "type": "file", "size": len(d)} for n, d in sorted(sb["files"].items())]
                    return self._json(200, {"path": q, "entries": entries, "truncated": False})
                return self._error(405, "method_not_allowed", "not here")

            def _create(self, body: bytes) -> None:
                req = json.loads(body)
                if req["policy"] == "broken":
                    return self._error(
                        422, "policy_error", "/etc/haven/policies/broken.yaml:3:3: unknown key \"netwrk\""
                    )
                with fake.lock:
                    if len(fake.sandboxes) >= fake.max_sandboxes:
                        return self._error(429, "limit", "128 sandboxes already")
                    fake.creates += 1
                    sid = "hvs-%08x" % fake.creates
                    fake.sandboxes[sid] = {"policy": req["policy"], "files": {}, "runs": 0, "create": req}
                if req.get("destroy_on_disconnect"):
                    self.owned.append(sid)
                self._json(
                    201,
                    {"id": sid, "policy": req["policy"], "workspace": "/run/haven/workspaces/" + sid,
                     "pooled": bool(req.get("pool", True)), "project": False},
                )

            def _run(self, sb: Dict[str, Any], body: bytes) -> None:
                req = json.loads(body)
                sb["runs"] += 1
                out = fake.runner(sb, req)
                if out == "drop":
                    # As a service that died mid-run: no answer, the connection closed.
                    self.close_connection = True
                    return
                if not req.get("stream"):
                    return self._json(200, out)
                # Streamed: the runner's answer is a list of lines, the last the result.
                lines = out if isinstance(out, list) else [out]
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for line in lines:
                    data = (json.dumps(line) + "\n").encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(path, Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> "FakeService":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def targets(self) -> List[str]:
        return ["%s %s" % (m, t) for m, t, _, _ in self.requests]

    def body_of(self, index: int) -> Any:
        return json.loads(self.requests[index][2])


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def main(argv: List[str]) -> int:
    # fakeservice.py serve --socket PATH: what the SDK starts when HAVEN_BIN
    # points at this file; writes its pid beside the socket for the test.
    if argv[1:2] != ["serve"] or argv[2:3] != ["--socket"]:
        print("usage: fakeservice.py serve --socket PATH", file=sys.stderr)
        return 2
    path = argv[3]
    with open(path + ".pid", "w") as f:
        f.write(str(os.getpid()))
    with open(path + ".starts", "a") as f:
        f.write("%d\n" % os.getpid())
    behaviour = os.environ.get("FAKE_SERVE", "ok")
    if behaviour == "fail":
        print("haven serve: %s: cannot listen: the stand-in was told to fail" % path, file=sys.stderr)
        return 1
    if behaviour == "hang":
        print("haven serve: starting slowly", file=sys.stderr)
        threading.Event().wait()
    # As the real service, a moment of work before it listens (leftovers).
    threading.Event().wait(0.2)
    fake = FakeService(path)
    print("haven serve: listening on %s" % path, file=sys.stderr)
    fake.server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))


class FakeCase(unittest.TestCase):
    """A test with its own stand-in service on a socket in a temporary
    directory (self.sock), stopped and removed after."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="h-python-")
        self.sock = os.path.join(self.dir, "haven.sock")
        self.fake = FakeService(self.sock).start()

    def tearDown(self):
        self.fake.stop()
        subprocess.run(["rm", "-rf", self.dir])
