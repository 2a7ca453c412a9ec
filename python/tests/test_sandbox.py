"""Sandbox and run_code_blocks against the stand-in service."""

import os
import subprocess
import sys
import time
import unittest

import haven
from haven import Sandbox, format_results, run_code_blocks

from .fakeservice import FakeCase, b64

HERE = os.path.dirname(os.path.abspath(__file__))


class TestSandbox(FakeCase):
    def test_lifetime_on_one_connection(self):
        with Sandbox(policy="offline", socket=self.sock) as sb:
            self.assertTrue(sb.id.startswith("hvs-"))
            self.assertTrue(sb.pooled)
            self.assertEqual(self.fake.body_of(0), {"policy": "offline", "pool": True, "destroy_on_disconnect": True})
            r = sb.run(["echo", "-n", "hi"])
            self.assertEqual((r.exit_code, r.stdout), (0, "hi"))
            self.assertIn(sb.id, self.fake.sandboxes)
        self.assertEqual(self.fake.sandboxes, {})
        self.assertEqual(self.fake.targets()[-1], "DELETE /v1/sandboxes/" + sb.id)
        self.assertEqual({conn for _, _, _, conn in self.fake.requests}, {1})
        self.assertTrue(sb.closed)
        with self.assertRaises(haven.HavenError):
            sb.run(["true"])
        self.assertIsNone(sb.close())

    def test_options(self):
        with Sandbox("strict", project=".", pool=False, idle_timeout=60, socket=self.sock):
            pass
        self.assertEqual(
            self.fake.body_of(0),
            {"policy": "strict", "project": os.getcwd(), "pool": False, "destroy_on_disconnect": True,
             "idle_timeout_s": 60},
        )

    def test_policy_file_made_absolute(self):
        for policy, sent in [("offline", "offline"), ("my.yaml", os.path.join(os.getcwd(), "my.yaml")),
                             ("p/x", os.path.join(os.getcwd(), "p/x")), ("/etc/p.yaml", "/etc/p.yaml")]:
            with Sandbox(policy, socket=self.sock):
                pass
            self.assertEqual(self.fake.body_of(-2)["policy"], sent)

    def test_refused_policy(self):
        with self.assertRaises(haven.PolicyError) as cm:
            Sandbox(policy="broken", socket=self.sock)
        self.assertIn("broken.yaml:3:3", str(cm.exception))

    def test_run_code_and_files(self):
        with Sandbox(socket=self.sock) as sb:
            self.assertEqual(sb.files.write("in.txt", b"data"), 4)
            r = sb.run_code("print(open('in.txt').read())")
            self.assertEqual(r.stdout, "ran python3: print(open('in.txt').read())")
            self.assertEqual(sb.files.read("in.txt"), b"data")
            self.assertEqual([(e.name, e.size) for e in sb.files.list()], [(".haven-code-1.py", 28), ("in.txt", 4)])
            with self.assertRaises(haven.NotFound):
                sb.files.read("out.txt")
            n = len(self.fake.requests)
            with self.assertRaises(haven.UnsupportedLanguage):
                sb.run_code("puts 1", language="ruby")
            self.assertEqual(len(self.fake.requests), n)
            r = sb.run_code("echo x", language="sh")
            run = self.fake.body_of(-1)
            self.assertEqual(run["argv"], ["sh", ".haven-code-2.sh"])

    def test_stream(self):
        def runner(sb, req):
            self.assertTrue(req["stream"])
            return [
                {"stream": "stdout", "data": "a"},
                {"stream": "stderr", "data": "\ufffd", "data_b64": b64(b"\xff")},
                {"exit_code": 0, "stdout": "a", "stderr": "\ufffd", "stderr_b64": b64(b"\xff"), "duration_s": 0.1},
            ]

        self.fake.runner = runner
        with Sandbox(socket=self.sock) as sb:
            s = sb.stream(["x"])
            self.assertEqual(list(s), [("stdout", b"a"), ("stderr", b"\xff")])
            self.assertEqual(s.result.stderr_bytes, b"\xff")
            # A stream left unread is finished before the next request.
            sb.stream(["x"])
            self.assertEqual(sb.stream(["x"]).wait().stdout, "a")
            self.fake.runner = lambda sb, req: {"exit_code": 5, "stdout": "", "stderr": "", "duration_s": 0}
            self.assertEqual(sb.run(["y"]).exit_code, 5)
            self.fake.runner = runner
            s = sb.stream(["x"])
            s.wait()
            self.assertTrue(s.done)
        # A stream read to its end leaves the connection free for the DELETE.
        self.assertEqual(self.fake.targets()[-1], "DELETE /v1/sandboxes/" + sb.id)
        self.assertEqual(self.fake.connections, 1)

    def test_close_during_a_stream(self):
        self.fake.runner = lambda sb, req: [{"stream": "stdout", "data": "a"},
                                            {"exit_code": 0, "stdout": "a", "stderr": "", "duration_s": 0}]
        sb = Sandbox(socket=self.sock)
        s = sb.stream(["x"])
        self.assertEqual(next(iter(s)), ("stdout", b"a"))
        # Not read to its end: closing drops the connection (the service
        # then ends the run and the sandbox) rather than wait for the run.
        self.assertIsNone(sb.close())
        self.assertNotIn("DELETE /v1/sandboxes/" + sb.id, self.fake.targets())
        deadline = time.monotonic() + 5
        while self.fake.sandboxes and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.fake.sandboxes, {})

    def test_connection_lost(self):
        sb = Sandbox(socket=self.sock)
        self.fake.runner = lambda sb, req: "drop"
        with self.assertRaises(haven.ConnectionLost) as cm:
            sb.run(["x"])
        self.assertIn("the connection to %s broke" % self.sock, str(cm.exception))
        # The sandbox went with its connection; the next request says so.
        with self.assertRaises(haven.NotFound):
            sb.files.read("a")
        self.assertIsNone(sb.close())
        self.assertEqual(self.fake.connections, 2)

    def test_crashed_client_leaves_nothing(self):
        # A process that dies holding a Sandbox: its connection closes and,
        # because it was created with destroy_on_disconnect, so does the sandbox.
        code = (
            "import os, sys, signal; sys.path.insert(0, %r); from haven import Sandbox;"
            "sb = Sandbox(socket=%r); print(sb.id, flush=True); os.kill(os.getpid(), signal.SIGKILL)"
            % (os.path.dirname(HERE), self.sock)
        )
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, -9)
        self.assertTrue(p.stdout.startswith("hvs-"))
        deadline = time.monotonic() + 5
        while self.fake.sandboxes and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.fake.sandboxes, {})
        self.assertEqual(self.fake.creates, 1)


ANSWER = """Here is the plan.

```python
print("hello")
```

The output will be:

```text
hello
```

Then in shell:

```console
$ echo hi
hi
```

And in JavaScript:

```js
console.log(1)
```

```js
console.log(2)
```
"""


class TestCodeBlocks(FakeCase):
    def test_blocks_in_one_sandbox(self):
        results = run_code_blocks(ANSWER, policy="offline", socket=self.sock)
        self.assertEqual([r.language for r in results], ["python", "text", "console", "js", "js"])
        self.assertEqual(results[0].result.stdout, 'ran python3: print("hello")\n')
        self.assertIn("'text' is not a language", results[1].skipped)
        self.assertEqual(results[2].result.stdout, "ran bash: echo hi\n")
        for r in results[3:]:
            self.assertFalse(r.ran)
            self.assertIn("node cannot be run in this sandbox (exit 127: haven: exec node", r.skipped)
        self.assertEqual(self.fake.creates, 1)
        self.assertEqual(self.fake.sandboxes, {})
        runs = [self.fake.body_of(i)["argv"] for i, t in enumerate(self.fake.targets()) if t.endswith("/run")]
        # Each interpreter is probed once, before its first block.
        self.assertEqual(
            runs,
            [["python3", "-c", "pass"], ["python3", ".haven-code-1.py"], ["bash", "-c", ":"],
             ["bash", ".haven-code-2.sh"], ["node", "-e", "0"]],
        )
        text = format_results(results)
        self.assertIn("[block 1: python] exit 0, 0.01 s\nstdout:\nran python3:", text)
        self.assertIn("[block 2: text] skipped:", text)
        self.assertIn("[block 4: js] skipped: node cannot be run", text)

    def test_no_runnable_block_makes_no_sandbox(self):
        results = run_code_blocks("```text\nx\n```\nno code\n", socket=self.sock)
        self.assertEqual(len(results), 1)
        self.assertEqual(self.fake.creates, 0)
        self.assertEqual(run_code_blocks("nothing", socket=self.sock), [])

    def test_given_sandbox_is_left_open(self):
        with Sandbox(socket=self.sock) as sb:
            run_code_blocks("```sh\necho\n```\n", sandbox=sb)
            self.assertIn(sb.id, self.fake.sandboxes)
            self.assertFalse(sb.closed)

    def test_stop_on_error_and_format(self):
        self.fake.runner = lambda sb, req: {
            "exit_code": 0 if req["argv"][1] == "-c" else 124, "stdout": "x" * 50, "stderr": "",
            "duration_s": 1.0, "timed_out": req["argv"][1] != "-c", "stdout_truncated": True}
        results = run_code_blocks("```py\n1\n```\n```py\n2\n```\n", socket=self.sock, stop_on_error=True)
        self.assertTrue(results[0].ran)
        self.assertEqual(results[1].skipped, "block 1 failed before it")
        text = format_results(results, max_chars=10)
        self.assertIn("timed out (exit 124)", text)
        self.assertIn("[stdout truncated by the sandbox's output limit]", text)
        self.assertIn("[... 40 more characters not shown]", text)

    def test_format_no_output(self):
        self.fake.runner = lambda sb, req: {"exit_code": 0, "stdout": "", "stderr": "", "duration_s": 0.01}
        results = run_code_blocks("```sh\ntrue\n```\n", socket=self.sock)
        self.assertEqual(format_results(results), "[block 1: sh] exit 0, 0.01 s\n(no output)\n")

    def test_probe_failure_other_than_exec(self):
        self.fake.runner = lambda sb, req: {"exit_code": 1, "stdout": "", "stderr": "boom\n", "duration_s": 0}
        (r,) = run_code_blocks("```bash\nls\n```\n", socket=self.sock)
        self.assertEqual(r.skipped, "bash does not work in this sandbox (bash -c : exited 1: boom)")


if __name__ == "__main__":
    unittest.main()
