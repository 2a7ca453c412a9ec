#!/usr/bin/env python3
"""A stand-in for a model API's host over HTTPS, for the gateway's tests.

    gateway_standin.py ADDR CERT KEY LOG READY HANDSHAKE_DIR

Serves HTTPS on ADDR:443 with CERT/KEY (made at test time for the real
host name by a test CA) and appends one JSON line per request to LOG:
{"method", "path", "headers": {lower-case name: value}, "body_bytes"}.
Then:
  POST /v1/messages with "stream": true in the body: a server-sent event
    stream, chunked as the providers send it: event "one", then it waits
    (at most 10 s) for HANDSHAKE_DIR/got-one, which the client makes once
    it has read event one, logs {"stream": "piecewise"} or
    {"stream": "buffered"}, sends event "two" and closes;
  POST /v1/messages otherwise: 200 with a small JSON body;
  anything else: 404.
READY is written once it listens."""
import json
import os
import socket
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

addr, cert, key, log, ready, handshake = sys.argv[1:7]


def append(entry):
    with open(log, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # The head and the body go out in separate writes: without this,
        # Nagle and the client's delayed ACK add 40 ms to an answer.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def body(self):
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def record(self, body):
        append({"method": self.command, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body_bytes": len(body)})

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        self.record(b"")
        self.send_error(404)

    def do_POST(self):
        body = self.body()
        self.record(body)
        if self.path != "/v1/messages":
            self.send_error(404)
            return
        if b'"stream":true' in body.replace(b" ", b""):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.chunk(b"event: one\ndata: {\"n\":1}\n\n")
            if handshake != "-":
                mark = os.path.join(handshake, "got-one")
                deadline = time.time() + 10
                while time.time() < deadline and not os.path.exists(mark):
                    time.sleep(0.02)
                append({"stream": "piecewise" if os.path.exists(mark) else "buffered"})
            self.chunk(b"event: two\ndata: {\"n\":2}\n\n")
            self.chunk(b"")
            return
        answer = b'{"type":"message","content":[{"type":"text","text":"hello from the stand-in"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


server = ThreadingHTTPServer((addr, 443), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(ready, "w") as f:
    f.write("ready\n")
server.serve_forever()
