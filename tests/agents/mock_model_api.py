#!/usr/bin/env python3
"""A stand-in for a model API that scripts an agent's tool calls.

    mock_model_api.py SCRIPT.json LOG.jsonl READY_FILE ADDR PORT

Speaks, over plain HTTP, the Anthropic Messages API (POST /v1/messages,
streamed or not: Claude Code) and the OpenAI Responses API (POST
/v1/responses, streamed as server-sent events: Codex), chosen by the
request's path.  SCRIPT.json is a list of steps, the same for both; a
request whose conversation carries N tool results gets step N: {"tool":
NAME, "input": {...}} becomes a tool call (a tool_use block; a
function_call item, or a custom_tool_call item when the request offers
NAME as a freeform tool and "input" is a string), {"text": "..."} a final
answer.  Requests that offer no tools (the CLI's side calls: titles,
summaries) get a short text.  Every request, and every tool result the
agent sent back, is logged to LOG.jsonl, so a test can read what the
agent saw.  Test-only: serves until killed, one thread per connection,
bounded bodies.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 16 * 1024 * 1024
script = []
log_lock = threading.Lock()
log_path = None
# MOCK_DUMP=1: log every request whole (headers and body), to see what a
# new version of a CLI sends.
DUMP = os.environ.get("MOCK_DUMP") == "1"


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


def responses_tool_results(items):
    """The tool results in an OpenAI Responses API request's input items."""
    out = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict) or it.get("type") not in ("function_call_output", "custom_tool_call_output"):
            continue
        c = it.get("output")
        if isinstance(c, dict):  # {"content": ..., "success": ...} in some versions
            c = c.get("content")
        if isinstance(c, list):
            c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
        out.append({"id": it.get("call_id"), "is_error": False, "content": c})
    return out


def next_step(results):
    """The script's step for a conversation that carries RESULTS, after
    logging the newest result; None past the end of the script."""
    n = len(results)
    if n > 0:
        log({"event": "tool_result", "step": n - 1, **results[-1]})
    return (n, script[n]) if n < len(script) else (n, None)


def reply_blocks(req):
    if not req.get("tools"):
        return [{"type": "text", "text": "Scripted session"}], "end_turn"
    n, step = next_step(tool_results(req.get("messages", [])))
    if step is None:
        return [{"type": "text", "text": "done"}], "end_turn"
    if "tool" in step:
        return [{"type": "tool_use", "id": "toolu_%04d" % n, "name": step["tool"], "input": step["input"]}], "tool_use"
    return [{"type": "text", "text": step.get("text", "done")}], "end_turn"


def reply_items(req):
    """The output items answering a Responses API request."""
    def message(text):
        return {"type": "message", "id": "msg_%04d" % n, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    n = 0
    if not req.get("tools"):
        return [message("Scripted session")]
    n, step = next_step(responses_tool_results(req.get("input")))
    if step is None:
        return [message("done")]
    if "tool" not in step:
        return [message(step.get("text", "done"))]
    freeform = any(t.get("type") == "custom" and t.get("name") == step["tool"]
                   for t in req["tools"] if isinstance(t, dict))
    if freeform and isinstance(step["input"], str):
        return [{"type": "custom_tool_call", "id": "ctc_%04d" % n, "call_id": "call_%04d" % n,
                 "status": "completed", "name": step["tool"], "input": step["input"]}]
    return [{"type": "function_call", "id": "fc_%04d" % n, "call_id": "call_%04d" % n, "status": "completed",
             "name": step["tool"], "arguments": json.dumps(step["input"])}]


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
        if self.headers.get("upgrade", "").lower() == "websocket":
            # Codex asks for the Responses API over a WebSocket first.
            self.send_json(426, {"error": {"type": "invalid_request_error", "message": "mock: no websocket"}})
            return
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
        if DUMP:
            log({"event": "dump", "path": path, "headers": dict(self.headers), "body": req})
        if path.endswith("/v1/responses"):
            self.send_responses(req)
            return
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

    def send_responses(self, req):
        """A Responses API answer: server-sent events, each JSON object
        carrying its own type and a sequence number."""
        items = reply_items(req)
        resp = {"id": "resp_mock", "object": "response", "created_at": int(time.time()), "status": "in_progress",
                "model": req.get("model", "mock"), "output": []}
        events = [{"type": "response.created", "response": resp}]
        for i, it in enumerate(items):
            events.append({"type": "response.output_item.added", "output_index": i,
                           "item": {**it, "status": "in_progress"}})
            if it["type"] == "message":
                text = it["content"][0]["text"]
                events.append({"type": "response.output_text.delta", "item_id": it["id"], "output_index": i,
                               "content_index": 0, "delta": text})
                events.append({"type": "response.output_text.done", "item_id": it["id"], "output_index": i,
                               "content_index": 0, "text": text})
            events.append({"type": "response.output_item.done", "output_index": i, "item": it})
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events.append({"type": "response.completed",
                       "response": {**resp, "status": "completed", "output": items, "usage": usage}})
        body = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps({**e, "sequence_number": k}))
                       for k, e in enumerate(events)).encode()
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
