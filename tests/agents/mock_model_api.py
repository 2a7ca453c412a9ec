#!/usr/bin/env python3
"""A stand-in for a model API that scripts an agent's tool calls.

    mock_model_api.py SCRIPT.json LOG.jsonl READY_FILE ADDR PORT

Speaks the Anthropic Messages API (POST /v1/messages, streamed or not)
over plain HTTP.  SCRIPT.json is a list of steps; a request whose
conversation carries N tool results gets step N: {"tool": NAME, "input":
{...}} becomes a tool_use block, {"text": "..."} a final answer.  Requests
that offer no tools (the CLI's side calls: titles, summaries) get a short
text.  Every request, and every tool result the agent sent back, is
logged to LOG.jsonl, so a test can read what the agent saw.  Test-only:
serves until killed, one thread per connection, bounded bodies.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 16 * 1024 * 1024
script = []
log_lock = threading.Lock()
log_path = None


def log(rec):
    with log_lock, open(log_path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def tool_results(messages):
    out = []
    for m in messages:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                c = b.get("content")
                if isinstance(c, list):
                    c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
                out.append({"id": b.get("tool_use_id"), "is_error": bool(b.get("is_error")), "content": c})
    return out


def reply_blocks(req):
    if not req.get("tools"):
        return [{"type": "text", "text": "Scripted session"}], "end_turn"
    results = tool_results(req.get("messages", []))
    n = len(results)
    if n > 0:
        log({"event": "tool_result", "step": n - 1, **results[-1]})
    if n >= len(script):
        return [{"type": "text", "text": "done"}], "end_turn"
    step = script[n]
    if "tool" in step:
        return [{"type": "tool_use", "id": "toolu_%04d" % n, "name": step["tool"], "input": step["input"]}], "tool_use"
    return [{"type": "text", "text": step.get("text", "done")}], "end_turn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log({"event": "request", "method": "GET", "path": self.path})
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        if n > MAX_BODY:
            self.send_json(413, {"type": "error", "error": {"type": "request_too_large", "message": "mock"}})
            return
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        log({"event": "request", "method": "POST", "path": path, "model": req.get("model"),
             "tools": len(req.get("tools") or []), "stream": bool(req.get("stream")),
             "auth": "x-api-key" in self.headers or "authorization" in self.headers})
        if path.endswith("/count_tokens"):
            self.send_json(200, {"input_tokens": 10})
            return
        if not path.endswith("/v1/messages"):
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}})
            return
        blocks, stop = reply_blocks(req)
        msg = {"id": "msg_mock", "type": "message", "role": "assistant", "model": req.get("model", "mock"),
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not req.get("stream"):
            self.send_json(200, {**msg, "content": blocks, "stop_reason": stop})
            return
        events = [("message_start", {"type": "message_start", "message": {**msg, "content": []}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "tool_use", "id": b["id"],
                                                                         "name": b["name"], "input": {}}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": json.dumps(b["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        events.append(("message_stop", {"type": "message_stop"}))
        body = "".join("event: %s\ndata: %s\n\n" % (e, json.dumps(d)) for e, d in events).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    global script, log_path
    script_path, log_path, ready, addr, port = sys.argv[1:6]
    with open(script_path) as f:
        script = json.load(f)
    family = __import__("socket").AF_INET6 if ":" in addr else __import__("socket").AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

    srv = Server((addr, int(port)), Handler)
    open(ready, "w").close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
