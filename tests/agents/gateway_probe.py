#!/usr/bin/env python3
"""What a process in the sandbox gets from haven's model API gateway.

    gateway_probe.py STAND_IN_ADDR

Run inside the sandbox of a policy that serves the three providers
(anthropic on 127.0.0.1:8961, openai 8962, gemini 8963).  Sends requests
written byte by byte (so that nothing rewrites them first) and prints one
line per probe, "NAME STATUS [NOTE]", STATUS the response's status code or
"closed"/"refused"/"error:WHAT" when there was none:

  *-ok          a request the provider's allow-list passes, carrying a
                credential of the sandbox's own (which must not reach the
                provider);
  *-stream      a streamed request for the stand-in's slow model: NOTE
                "streamed" when its first event arrived at least 2 s before
                the end (relayed as it came), else "buffered";
  *-path ...    paths and forms the gateway must refuse;
  a-host        a passed path with another Host;
  a-absolute    the request target naming another host;
  connect       CONNECT to another host;
  direct        a connection to the stand-in's own address (STAND_IN_ADDR:443,
                in haven's namespace): must not connect;
and last the environment's gateway variables and whether SSL_CERT_FILE is
set.
"""
import json
import os
import socket
import sys
import time

STOLEN = "sk-sandbox-own-credential-0123456789"


def exchange(port, head, body=b"", timeout=20):
    """(status, body, seconds to the first body byte, seconds to the end)."""
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout)
    except ConnectionRefusedError:
        return "refused", b"", None, None
    except OSError as e:
        return "error:%s" % e.strerror, b"", None, None
    data = b""
    first = None
    try:
        s.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if first is None and b"\r\n\r\n" in data and len(data.split(b"\r\n\r\n", 1)[1]) > 0:
                first = time.monotonic() - t0
    except OSError as e:
        if not data:
            return "error:%s" % e.strerror, b"", None, None
    finally:
        s.close()
    end = time.monotonic() - t0
    if not data.startswith(b"HTTP/1."):
        return "closed", data, first, end
    return data.split(b" ", 2)[1].decode(), data.split(b"\r\n\r\n", 1)[-1], first, end


def post(port, target, obj, extra="", host="127.0.0.1"):
    body = json.dumps(obj).encode()
    head = ("POST %s HTTP/1.1\nHost: %s\nContent-Type: application/json\nContent-Length: %d\n%s"
            "Connection: close\n" % (target, host, len(body), extra))
    return exchange(port, head, body)


def get(port, target, extra=""):
    return exchange(port, "GET %s HTTP/1.1\nHost: 127.0.0.1\n%sConnection: close\n" % (target, extra))


def show(name, result, note=""):
    print(name, result[0], note, flush=True)


def stream_note(result):
    _, _, first, end = result
    if first is None:
        return "no-body"
    return "streamed" if end - first >= 2.0 else "buffered(%.1f-%.1f)" % (first, end)


def main():
    stand_in = sys.argv[1]
    msg = {"model": "claude-test", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
    anth = "x-api-key: %s\nanthropic-version: 2023-06-01\n" % STOLEN
    show("a-ok", post(8961, "/v1/messages", msg, anth))
    r = post(8961, "/v1/messages", {**msg, "model": "hvt-slow-stream", "stream": True}, anth)
    show("a-stream", r, stream_note(r))
    show("a-path-files", post(8961, "/v1/files", msg, anth))
    show("a-path-dotdot", post(8961, "/v1/messages/../files", msg, anth))
    show("a-path-escape", post(8961, "/v1/%6dessages", msg, anth))
    show("a-path-batches", post(8961, "/v1/messages/batches", msg, anth))
    show("a-host", post(8961, "/v1/messages", msg, anth, host="evil.example"))
    show("a-absolute", post(8961, "http://evil.example/v1/messages", msg, anth, host="evil.example"))
    show("connect", exchange(8961, "CONNECT evil.example:443 HTTP/1.1\nHost: evil.example:443\n"))
    resp = {"model": "gpt-test", "input": "hi", "stream": True}
    bearer = "Authorization: Bearer %s\n" % STOLEN
    show("o-ok", post(8962, "/v1/responses", resp, bearer))
    r = post(8962, "/v1/responses", {**resp, "model": "hvt-slow-stream"}, bearer)
    show("o-stream", r, stream_note(r))
    show("o-path-files", get(8962, "/v1/files", bearer))
    show("o-path-keys", get(8962, "/v1/organization/admin_api_keys", bearer))
    gem = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    goog = "x-goog-api-key: %s\n" % STOLEN
    show("g-ok", post(8963, "/v1beta/models/gemini-test:generateContent", gem, goog))
    r = post(8963, "/v1beta/models/hvt-slow-stream:streamGenerateContent?alt=sse", gem, goog)
    show("g-stream", r, stream_note(r))
    show("g-count", post(8963, "/v1beta/models/gemini-test:countTokens", gem, goog))
    show("g-path-key-query", post(8963, "/v1beta/models/gemini-test:generateContent?key=" + STOLEN, gem))
    show("g-path-files", get(8963, "/v1beta/files", goog))
    try:
        socket.create_connection((stand_in, 443), 3).close()
        print("direct connected", flush=True)
    except OSError as e:
        print("direct not-connected", e.strerror, flush=True)
    for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY",
              "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"):
        print("env %s=%s" % (k, os.environ.get(k, "")))
    print("env SSL_CERT_FILE", "set" if "SSL_CERT_FILE" in os.environ else "unset")


if __name__ == "__main__":
    main()
