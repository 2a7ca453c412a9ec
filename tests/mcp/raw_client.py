#!/usr/bin/env python3
"""A raw MCP client: writes lines of bytes to `haven mcp`'s stdin, as a
broken or hostile client would, and records every line haven writes on
stdout.  For the malformed-message tests (tests/mcp/test_mcp_malformed.sh).

    raw_client.py SCRIPT_JSON -- HAVEN mcp [ARGS...]

SCRIPT_JSON is a file holding a list of steps:
  {"case": NAME, "send": TEXT | "b64": BASE64 | "repeat": [TEXT, N] (with
   "prefix" and "suffix": TEXTs around it), "newline": true}
      sends the line (its bytes; a newline after it unless "newline" is
      false), then a ping with the id "probe-NAME", and waits (10 s at most)
      for the ping's answer: the case's "answers" are the messages that came
      before it, "alive" whether the ping was answered.
  {"send": TEXT, "wait_id": ID, "timeout": S}
      sends the line and waits for the answer with that id (any JSON value).
  {"host": COMMAND, "as": NAME}
      runs COMMAND (bash, MCP_PID in its environment): "host": {NAME:
      {"status", "stdout"}}.
  {"eof": true, "timeout": S}
      closes stdin and waits for haven mcp to exit.
Prints one JSON object: {"cases": {NAME: {"answers", "alive"}},
"waited": {ID-as-JSON: message or null}, "lines": N, "bad_lines": [every
stdout line that is not a JSON-RPC 2.0 object, as a repr], "exit": code or
null, "stderr": TEXT}.
"""
import base64
import json
import os
import queue
import subprocess
import sys
import threading
import time


def main():
    script = json.load(open(sys.argv[1]))
    argv = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    messages = queue.Queue()
    bad_lines = []
    nlines = [0]
    stderr = []

    def read_stdout():
        for raw in proc.stdout:
            nlines[0] += 1
            # Every line on stdout must be a JSON-RPC 2.0 message in UTF-8.
            try:
                msg = json.loads(raw.decode("utf-8"))
                if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not raw.endswith(b"\n"):
                    raise ValueError("not a JSON-RPC 2.0 object line")
            except ValueError:
                bad_lines.append(repr(raw[:300]))
                continue
            messages.put(msg)
        messages.put(None)

    def read_stderr():
        stderr.append(proc.stderr.read())

    threading.Thread(target=read_stdout, daemon=True).start()
    err_reader = threading.Thread(target=read_stderr, daemon=True)
    err_reader.start()

    out = {"cases": {}, "waited": {}}
    ended = [False]

    def send(data):
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def wait_for(id_value, timeout):
        """Messages up to the answer with this id; the answer or None."""
        before = []
        deadline = time.monotonic() + timeout
        while not ended[0]:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                msg = messages.get(timeout=left)
            except queue.Empty:
                break
            if msg is None:
                ended[0] = True
                break
            if "id" in msg and msg["id"] == id_value and ("result" in msg or "error" in msg) and "method" not in msg:
                return before, msg
            before.append(msg)
        return before, None

    for step in script:
        if "host" in step:
            r = subprocess.run(["bash", "-c", step["host"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=step.get("timeout", 60), env=dict(os.environ, MCP_PID=str(proc.pid)))
            out.setdefault("host", {})[step["as"]] = {"status": r.returncode, "stdout": r.stdout.decode("utf-8", "replace")}
            continue
        if step.get("eof"):
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=step.get("timeout", 30))
            except subprocess.TimeoutExpired:
                pass
            continue
        if "b64" in step:
            data = base64.b64decode(step["b64"])
        elif "repeat" in step:
            data = (step.get("prefix", "").encode() + step["repeat"][0].encode() * step["repeat"][1]
                    + step.get("suffix", "").encode())
        else:
            data = step["send"].encode("utf-8")
        if step.get("newline", True):
            data += b"\n"
        ok = send(data)
        if "case" in step:
            name = step["case"]
            probe = "probe-" + name
            if ok:
                ok = send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode() + b"\n")
            before, answer = wait_for(probe, step.get("timeout", 10)) if ok else ([], None)
            out["cases"][name] = {"answers": before, "alive": answer is not None and "result" in answer}
        elif "wait_id" in step:
            before, answer = wait_for(step["wait_id"], step.get("timeout", 30))
            out["waited"][json.dumps(step["wait_id"])] = answer
            if before:
                out.setdefault("unexpected", []).extend(before)

    if proc.poll() is None:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            out["killed"] = True
    err_reader.join(timeout=5)
    out["exit"] = proc.returncode
    out["lines"] = nlines[0]
    out["bad_lines"] = bad_lines
    out["stderr"] = b"".join(stderr).decode("utf-8", "replace")[-4000:]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
