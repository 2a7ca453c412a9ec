"""Decoding of the service's answers and the mapping of its errors (pure)."""

import json
import unittest

import haven
from haven.errors import error_from_response
from haven.sandbox import RunResult, _run_request

from .fakeservice import b64


class TestRunResult(unittest.TestCase):
    def test_text_output(self):
        r = RunResult.from_json(
            {"exit_code": 0, "stdout": "42\n", "stderr": "", "duration_s": 0.5, "timed_out": False,
             "stdout_truncated": False, "stderr_truncated": False}
        )
        self.assertEqual((r.exit_code, r.stdout, r.stdout_bytes, r.duration), (0, "42\n", b"42\n", 0.5))
        self.assertTrue(r.ok)

    def test_b64_keeps_exact_bytes(self):
        raw = b"ok \xff\xfe end\n"
        r = RunResult.from_json(
            {"exit_code": 3, "stdout": raw.decode("utf-8", "replace"), "stdout_b64": b64(raw),
             "stderr": "\u00e9", "duration_s": 1, "stdout_truncated": True}
        )
        self.assertEqual(r.stdout_bytes, raw)
        self.assertEqual(r.stdout, "ok \ufffd\ufffd end\n")
        self.assertEqual(r.stderr_bytes, "\u00e9".encode())
        self.assertTrue(r.stdout_truncated)
        self.assertFalse(r.stderr_truncated)
        self.assertFalse(r.ok)

    def test_timed_out(self):
        r = RunResult.from_json({"exit_code": 124, "stdout": "", "stderr": "", "duration_s": 2.0, "timed_out": True})
        self.assertTrue(r.timed_out)
        self.assertFalse(r.ok)

    def test_malformed(self):
        for doc in [
            {},
            {"exit_code": "0"},
            {"exit_code": True},
            {"exit_code": 0, "stdout": 5},
            {"exit_code": 0, "stdout_b64": "***"},
            {"exit_code": 0, "timed_out": "no"},
            {"exit_code": 0, "duration_s": "1"},
        ]:
            with self.assertRaises(haven.ProtocolError, msg=json.dumps(doc)):
                RunResult.from_json(doc)


class TestRunRequest(unittest.TestCase):
    def test_fields(self):
        req = _run_request(["cat"], b"\x00\xff", {"A": "1"}, "sub", 1.2, 100)
        self.assertEqual(
            req,
            {"argv": ["cat"], "env": {"A": "1"}, "cwd": "sub", "stdin_b64": "AP8=", "timeout_s": 2, "max_output": 100},
        )
        self.assertEqual(_run_request(["cat"], "text", None, None, None, None), {"argv": ["cat"], "stdin": "text"})

    def test_refused(self):
        with self.assertRaises(TypeError):
            _run_request("ls -l", None, None, None, None, None)
        with self.assertRaises(ValueError):
            _run_request([], None, None, None, None, None)
        with self.assertRaises(ValueError):
            _run_request(["x"], None, None, None, 0, None)


class TestErrors(unittest.TestCase):
    def test_codes(self):
        cases = [
            (400, "bad_request", haven.BadRequest),
            (403, "forbidden", haven.Forbidden),
            (404, "not_found", haven.NotFound),
            (409, "busy", haven.Busy),
            (413, "too_large", haven.TooLarge),
            (422, "policy_error", haven.PolicyError),
            (429, "limit", haven.LimitError),
            (500, "internal", haven.InternalError),
            (503, "unavailable", haven.Unavailable),
        ]
        for status, code, cls in cases:
            e = error_from_response(status, json.dumps({"error": {"code": code, "message": "m " + code}}).encode())
            self.assertIs(type(e), cls)
            self.assertEqual((e.code, e.message, e.status), (code, "m " + code, status))
            self.assertIsInstance(e, haven.HavenError)

    def test_policy_message_kept(self):
        msg = "/etc/haven/policies/x.yaml:3:5: unknown key \"netwrk\""
        e = error_from_response(422, json.dumps({"error": {"code": "policy_error", "message": msg}}).encode())
        self.assertIn("x.yaml:3:5", str(e))

    def test_no_json(self):
        e = error_from_response(503, b"Service Unavailable")
        self.assertIs(type(e), haven.Unavailable)
        self.assertEqual(e.message, "Service Unavailable")
        e = error_from_response(418, b"")
        self.assertIs(type(e), haven.HavenError)
        self.assertEqual(e.message, "HTTP status 418")

    def test_unknown_code_falls_back_to_status(self):
        e = error_from_response(404, b'{"error":{"code":"gone","message":"sandbox ended"}}')
        self.assertIsInstance(e, haven.NotFound)
        self.assertEqual(e.code, "gone")


if __name__ == "__main__":
    unittest.main()
