#!/usr/bin/env python3
"""A stand-in for a model API that scripts an agent's tool calls.

    mock_model_api.py SCRIPT.json LOG.jsonl READY_FILE ADDR PORT [--tls CERT KEY]

Speaks, over plain HTTP (or HTTPS with --tls: CERT is the server's
certificate chain in PEM, KEY its private key), the Anthropic Messages API
(POST /v1/messages, streamed or not: Claude Code), the OpenAI Responses
API (POST /v1/responses, streamed as server-sent events: Codex) and the
Gemini API (POST /v1beta/models/MODEL:generateContent,
:streamGenerateContent?alt=sse, :countTokens: Gemini CLI), chosen by the
request's path.  SCRIPT.json is a list of steps, the same for both; a
request whose conversation carries N tool results gets step N: {"tool":
NAME, "input": {...}} becomes a tool call (a tool_use block; a
function_call item, or a custom_tool_call item when the request offers
NAME as a freeform tool and "input" is a string), {"text": "..."} a final
answer.  Requests that offer no tools (the CLI's side calls: titles,
summaries) get a short text.  Every request, and every tool result the
agent sent back, is logged to LOG.jsonl, so a test can read what the
agent saw.  Each request's record holds its target as sent (query
included) and its headers (names in lower case), so that a test can see
which credential reached the API.  Server-sent events go out chunked, one
chunk per event; a request for the model "hvt-slow-stream" gets its first
event at once and the rest 3 s later, so a test can tell a stream relayed
as it comes from one buffered to its end.  Test-only: serves until killed,
one thread per connection, bounded bodies.
"""
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 16 * 1024 * 1024
SLOW_MODEL = "hvt-slow-stream"
SLOW_PAUSE = 3.0
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


def gemini_tool_results(contents):
    """The tool results in a Gemini request's conversation: its
    functionResponse parts, their output as text."""
    out = []
    for c in contents if isinstance(contents, list) else []:
        for part in (c.get("parts") or []) if isinstance(c, dict) else []:
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(fr, dict):
                continue
            r = fr.get("response")
            if isinstance(r, dict):
                r = r.get("output", r.get("content", r.get("error", json.dumps(r))))
            if not isinstance(r, str):
                r = json.dumps(r)
            out.append({"id": fr.get("id") or fr.get("name"), "is_error": False, "content": r})
    return out


def schema_value(schema):
    """A value that fits the JSON schema a side call asks its answer in
    (Gemini CLI's next-speaker, loop and routing checks): the first of an
    enum, an empty value of the type (a number: its minimum, or 1), an object with
    its fields."""
    if not isinstance(schema, dict):
        return "scripted"
    if schema.get("enum"):
        return schema["enum"][0]
    t = str(schema.get("type", "string")).lower()
    if t == "object":
        props = schema.get("properties") or {}
        return {k: schema_value(v) for k, v in props.items()}
    if t == "array":
        return []
    if t in ("number", "integer"):
        return schema.get("minimum", 1)
    if t == "boolean":
        return False
    return "scripted"


def gemini_reply(req):
    """The parts and finish reason answering a Gemini request."""
    gen = req.get("generationConfig") or {}
    decls = [d for t in req.get("tools") or [] if isinstance(t, dict) for d in t.get("functionDeclarations") or []]
    if not decls:
        if gen.get("responseMimeType") == "application/json":
            schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
            return [{"text": json.dumps(schema_value(schema))}]
        return [{"text": "Scripted session"}]
    n, step = next_step(gemini_tool_results(req.get("contents")))
    if step is None:
        return [{"text": "done"}]
    if "tool" in step:
        return [{"functionCall": {"name": step["tool"], "args": step["input"], "id": "call_%04d" % n}}]
    return [{"text": step.get("text", "done")}]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def log_request_seen(self, method, req=None):
        """The request's record: its target as sent and its headers, so
        that a test can see which credential arrived."""
        headers = {}
        for k, v in self.headers.items():
            # A header sent twice shows as both values, never as the last.
            headers[k.lower()] = headers[k.lower()] + ", " + v if k.lower() in headers else v
        rec = {"event": "request", "method": method, "path": self.path.split("?")[0], "target": self.path,
               "headers": headers,
               "auth": any(h in self.headers for h in ("x-api-key", "authorization", "x-goog-api-key"))}
        if req is not None:
            rec.update({"model": req.get("model"), "tools": len(req.get("tools") or []),
                        "stream": bool(req.get("stream"))})
        log(rec)

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_events(self, chunks, slow):
        """Server-sent events, chunked, one chunk per event as the APIs
        stream them; SLOW: the first at once, the rest SLOW_PAUSE later."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for i, c in enumerate(chunks):
            data = c.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if slow and i == 0:
                time.sleep(SLOW_PAUSE)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        self.log_request_seen("GET")
        if self.headers.get("upgrade", "").lower() == "websocket":
            # Codex asks for the Responses API over a WebSocket first.
            self.send_json(426, {"error": {"type": "invalid_request_error", "message": "mock: no websocket"}})
            return
        if self.path.split("?")[0] == "/v1beta/models":
            self.send_json(200, {"models": []})
            return
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def read_body(self):
        """The request's JSON body, Content-Length or chunked; None when
        it is too large (answered 413)."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if len(raw) + size > MAX_BODY:
                    self.send_json(413, {"type": "error", "error": {"type": "request_too_large", "message": "mock"}})
                    return None
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("content-length") or 0)
            if n > MAX_BODY:
                self.send_json(413, {"type": "error", "error": {"type": "request_too_large", "message": "mock"}})
                return None
            raw = self.rfile.read(n)
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        return req if isinstance(req, dict) else {}

    def do_POST(self):
        req = self.read_body()
        if req is None:
            return
        path = self.path.split("?")[0]
        self.log_request_seen("POST", req)
        if DUMP:
            log({"event": "dump", "path": path, "headers": dict(self.headers), "body": req})
        if path.endswith("/v1/responses"):
            self.send_responses(req)
            return
        m = re.fullmatch(r"/v1beta/models/([^/:]+):([A-Za-z]+)", path)
        if m:
            self.send_gemini(req, m.group(1), m.group(2))
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
        self.send_events(["event: %s\ndata: %s\n\n" % (e, json.dumps(d)) for e, d in events],
                         req.get("model") == SLOW_MODEL)

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
        self.send_events(["event: %s\ndata: %s\n\n" % (e["type"], json.dumps({**e, "sequence_number": k}))
                          for k, e in enumerate(events)], req.get("model") == SLOW_MODEL)

    def send_gemini(self, req, model, method):
        """The Gemini API's methods on a model: countTokens, embedding,
        generateContent and its stream (?alt=sse: one event per chunk,
        each a whole GenerateContentResponse)."""
        if method == "countTokens":
            self.send_json(200, {"totalTokens": 10})
            return
        if method == "embedContent":
            self.send_json(200, {"embedding": {"values": [0.0] * 8}})
            return
        if method == "batchEmbedContents":
            self.send_json(200, {"embeddings": [{"values": [0.0] * 8} for _ in req.get("requests") or []]})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self.send_json(404, {"error": {"code": 404, "message": "mock", "status": "NOT_FOUND"}})
            return
        parts = gemini_reply(req)
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}

        def response(ps, finish):
            cand = {"content": {"role": "model", "parts": ps}, "index": 0}
            if finish:
                cand["finishReason"] = "STOP"
            return {"candidates": [cand], "usageMetadata": usage, "modelVersion": model}
        if method == "generateContent":
            self.send_json(200, response(parts, True))
            return
        chunks = [response(parts, True)]
        if model == SLOW_MODEL:
            chunks = [response([{"text": ""}], False)] + chunks
        self.send_events(["data: %s\r\n\r\n" % json.dumps(c) for c in chunks], model == SLOW_MODEL)


def main():
    global script, log_path
    script_path, log_path, ready, addr, port = sys.argv[1:6]
    tls = None
    if sys.argv[6:7] == ["--tls"]:
        # The handshake happens in the connection's own thread (below), so
        # a client that never completes it holds up no one else.
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[7], sys.argv[8])
        tls.set_alpn_protocols(["http/1.1"])
    elif len(sys.argv) != 6:
        sys.exit(__doc__)
    with open(script_path) as f:
        script = json.load(f)
    family = __import__("socket").AF_INET6 if ":" in addr else __import__("socket").AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

        def finish_request(self, request, client_address):
            if tls is None:
                super().finish_request(request, client_address)
                return
            request.settimeout(30)
            try:
                conn = tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError) as e:
                log({"event": "tls_error", "error": str(e)})
                return
            try:
                super().finish_request(conn, client_address)
            finally:
                conn.close()

    srv = Server((addr, int(port)), Handler)
    open(ready, "w").close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
