"""The SDK against a real `haven serve` (HAVEN_BIN), started by the SDK
itself on a private socket ($HAVEN_SOCKET): real sandboxes, so root only.
Skipped, saying why, without HAVEN_BIN or root."""

import contextlib
import io
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import haven
from haven import Client, NotFound, PolicyError, Sandbox, format_results, run_code_blocks

HERE = os.path.dirname(os.path.abspath(__file__))
HAVEN_BIN = os.environ.get("HAVEN_BIN", "")


def _why_not() -> str:
    if not HAVEN_BIN:
        return "HAVEN_BIN is not set (tests/python.sh sets it to the build's haven)"
    if os.geteuid() != 0:
        return "the service makes real sandboxes: run as root"
    try:
        p = subprocess.run([HAVEN_BIN, "serve", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    except OSError as e:
        return "%s: %s" % (HAVEN_BIN, e)
    if b'unknown command "serve"' in p.stdout:
        return "%s has no serve command" % HAVEN_BIN
    return ""


def _service_pid(path: str) -> int:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        return pid
    finally:
        s.close()


def _in_a_cgroup(sandbox_id: str) -> bool:
    """Whether any process is in a cgroup named after the sandbox."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cgroup" % pid) as f:
                if sandbox_id in f.read():
                    return True
        except OSError:
            pass
    return False


WHY_NOT = _why_not()

MODEL_ANSWER = textwrap.dedent(
    """\
    Sure! First write the words to a file:

    ```python
    with open("words.txt", "w") as f:
        f.write("the quick brown fox\\njumps over the lazy dog\\n")
    print("wrote", sum(1 for _ in open("words.txt")), "lines")
    ```

    Then count them with the shell:

    ```bash
    wc -w < words.txt
    ```

    which prints:

    ```
    9
    ```

    The same in JavaScript:

    ```javascript
    const fs = require("fs");
    console.log(fs.readFileSync("words.txt", "utf8").split(/\\s+/).filter(Boolean).length);
    ```

    And the lines with an "o":

    ```console
    $ grep -c o words.txt
    2
    ```
    """
)


@unittest.skipIf(WHY_NOT, WHY_NOT)
class TestService(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="h-python-it.")
        # Workspaces are made beside the socket and seen inside at the same path.
        os.chmod(cls.dir, 0o755)
        cls.sock = os.path.join(cls.dir, "run", "haven.sock")
        cls.saved_env = os.environ.get("HAVEN_SOCKET")
        os.environ["HAVEN_SOCKET"] = cls.sock
        # The SDK starts the service: nothing listens on the socket yet.
        with Client() as c:
            cls.version = c.version()
        cls.pid = _service_pid(cls.sock)

    @classmethod
    def tearDownClass(cls):
        try:
            os.kill(cls.pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    os.kill(cls.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                os.kill(cls.pid, signal.SIGKILL)
        finally:
            if cls.saved_env is None:
                os.environ.pop("HAVEN_SOCKET", None)
            else:
                os.environ["HAVEN_SOCKET"] = cls.saved_env
            log = os.path.join(cls.dir, "run", "serve.log")
            if os.path.exists(log) and os.environ.get("HAVEN_KEEP_LOG"):
                shutil.copy(log, os.environ["HAVEN_KEEP_LOG"])
            shutil.rmtree(cls.dir, ignore_errors=True)

    def assert_gone(self, sandbox_id, workspace):
        deadline = time.monotonic() + 10
        with Client() as c:
            while time.monotonic() < deadline:
                ids = [b.get("id") for b in c.list_sandboxes()]
                if sandbox_id not in ids and not os.path.exists(workspace) and not _in_a_cgroup(sandbox_id):
                    return
                time.sleep(0.05)
        self.assertNotIn(sandbox_id, ids)
        self.assertFalse(os.path.exists(workspace), workspace)
        self.assertFalse(_in_a_cgroup(sandbox_id), "processes left in %s's cgroup" % sandbox_id)

    def test_service_started_by_the_sdk(self):
        self.assertEqual(self.version.get("api"), 1, self.version)
        self.assertEqual(os.stat(self.sock).st_mode & 0o777, 0o600)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "run", "serve.log")))

    def test_issue_example_as_written(self):
        # The issue's lines, in its order: the code reads in.txt before it
        # is written, and nothing writes out.txt.
        with Sandbox(policy="offline") as sb:             # a fresh sandbox, scratch workspace
            r = sb.run(["python3", "-c", "print(6*7)"])   # r.exit_code, r.stdout, r.stderr, r.duration
            self.assertEqual((r.exit_code, r.stdout, r.stderr), (0, "42\n", ""))
            self.assertGreater(r.duration, 0)
            r = sb.run_code("print(open('in.txt').read())", language="python")
            self.assertEqual(r.exit_code, 1)
            self.assertIn("FileNotFoundError", r.stderr)
            with self.assertRaises(NotFound):
                sb.files.write("in.txt", b"data"); sb.files.read("out.txt")
            # In an order that works (the README's):
            r = sb.run_code("print(open('in.txt').read())", language="python")
            self.assertEqual((r.exit_code, r.stdout), (0, "data\n"))
            r = sb.run_code("open('out.txt', 'w').write('done')")
            self.assertEqual(sb.files.read("out.txt"), b"done")
            names = [e.name for e in sb.files.list()]
            self.assertIn("in.txt", names)
            self.assertIn("out.txt", names)
            sid, ws = sb.id, sb.workspace
        self.assert_gone(sid, ws)

    def test_readme_example(self):
        # The README's Python SDK example, run as it is written there.
        readme = os.path.join(os.path.dirname(os.path.dirname(HERE)), "README.md")
        with open(readme) as f:
            text = f.read()
        section = text[text.index("## Python SDK\n"):]
        (block,) = [b for b in haven.parse_code_blocks(section[: section.index("\n## ")]) if b.language == "python"]
        out = io.StringIO()
        scope = {}
        with contextlib.redirect_stdout(out):
            exec(compile(block.code, readme, "exec"), scope)
        self.assertEqual((scope["r"].exit_code, scope["r"].stdout), (0, "data\n"))
        self.assertRegex(out.getvalue(), r"^\[block 1: python\] exit 0, [0-9.]+ s\nstdout:\n3\n$")

    def test_run_code_blocks_on_a_model_answer(self):
        results = run_code_blocks(MODEL_ANSWER, policy="offline")
        self.assertEqual([r.language for r in results], ["python", "bash", "", "javascript", "console"])
        self.assertEqual(results[0].result.stdout, "wrote 2 lines\n")
        # One sandbox: the shell sees the file the Python block wrote.
        self.assertEqual((results[1].result.exit_code, results[1].result.stdout), (0, "9\n"))
        self.assertFalse(results[2].ran)
        self.assertIn("no language", results[2].skipped)
        node = results[3]
        if node.ran:
            self.assertEqual(node.result.stdout, "9\n")
        else:
            self.assertRegex(node.skipped, r"^node cannot be run in this sandbox \(exit 12[67]")
        self.assertEqual(results[4].result.stdout, "2\n")
        text = format_results(results)
        self.assertIn("[block 2: bash] exit 0", text)
        self.assertIn("[block 3: no language] skipped", text)
        with Client() as c:
            self.assertEqual(c.list_sandboxes(), [])

    def test_blocks_in_a_given_sandbox_and_exec_failure(self):
        with Sandbox(policy="offline") as sb:
            sb.run(["true"])
            (r,) = run_code_blocks("```sh\necho hi\n```\n", sandbox=sb)
            self.assertEqual(r.result.stdout, "hi\n")
            res = sb.run(["no-such-interpreter-h-python"])
            self.assertEqual(res.exit_code, 127)
            self.assertIn("no-such-interpreter-h-python", res.stderr)

    def test_project_sandbox(self):
        # A project directory, named relative to this process's directory:
        # the SDK sends it absolute; the sandbox works in it, never pooled.
        proj = os.path.join(self.dir, "proj")
        os.mkdir(proj)
        with open(os.path.join(proj, "a.txt"), "w") as f:
            f.write("hello\n")
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            sb = Sandbox(policy="offline", project="proj")
        finally:
            os.chdir(cwd)
        with sb:
            self.assertEqual((sb.workspace, sb.pooled, sb.info.get("project")), (proj, False, True))
            r = sb.run(["sh", "-c", "pwd; cat a.txt; echo made > b.txt"])
            self.assertEqual(r.stdout, "%s\nhello\n" % proj)
            self.assertEqual(sb.files.read("b.txt"), b"made\n")
        with open(os.path.join(proj, "b.txt")) as f:
            self.assertEqual(f.read(), "made\n")

    def test_refused_policy_names_file_and_line(self):
        path = os.path.join(self.dir, "broken.yaml")
        with open(path, "w") as f:
            f.write("name: broken\nextends: offline\nnetwork:\n  mode: nowhere\n")
        with self.assertRaises(PolicyError) as cm:
            Sandbox(policy=path)
        self.assertEqual(cm.exception.status, 422)
        self.assertIn(path + ":4:9", cm.exception.message)
        with self.assertRaises(haven.HavenError) as cm:
            Sandbox(policy="no-such-policy-h-python")
        self.assertIn("no-such-policy-h-python", cm.exception.message)

    def test_crashed_client_leaves_no_sandbox(self):
        code = (
            "import os, signal, sys; sys.path.insert(0, %r); from haven import Sandbox;"
            "sb = Sandbox(policy='offline'); sb.run(['true']); print(sb.id, sb.workspace, flush=True);"
            "os.kill(os.getpid(), signal.SIGKILL)" % os.path.dirname(HERE)
        )
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, -signal.SIGKILL, p.stdout)
        sid, ws = p.stdout.split()
        self.assert_gone(sid, ws)

    def test_limits_output_and_streaming(self):
        with Sandbox(policy="offline") as sb:
            r = sb.run(["sleep", "30"], timeout=1)
            self.assertTrue(r.timed_out)
            self.assertEqual(r.exit_code, 124)
            self.assertLess(r.duration, 10)
            r = sb.run(["head", "-c", "100000", "/dev/zero"], max_output=1000)
            self.assertTrue(r.stdout_truncated)
            self.assertEqual(r.stdout_bytes, b"\0" * 1000)
            r = sb.run(["cat"], stdin=b"\xff\xfe\x00bytes")
            self.assertEqual(r.stdout_bytes, b"\xff\xfe\x00bytes")
            r = sb.run(["sh", "-c", 'echo "$TZ" >&2; exit 3'], env={"TZ": "UTC"})
            self.assertEqual((r.exit_code, r.stderr), (3, "UTC\n"))
            # The API never widens the policy: a variable it does not pass is refused.
            with self.assertRaises(haven.Forbidden) as cm:
                sb.run(["true"], env={"GREETING": "hi"})
            self.assertIn("GREETING", cm.exception.message)
            s = sb.stream(["sh", "-c", "echo one; sleep 0.2; echo two >&2"])
            chunks = list(s)
            self.assertEqual(b"".join(d for n, d in chunks if n == "stdout"), b"one\n")
            self.assertEqual(b"".join(d for n, d in chunks if n == "stderr"), b"two\n")
            self.assertEqual(s.result.exit_code, 0)



@unittest.skipIf(WHY_NOT, WHY_NOT)
class TestServiceStart(unittest.TestCase):
    def test_clients_at_once_start_one_service(self):
        # Four processes find no service at once: one service starts, and
        # each gets a working sandbox from it.
        work = tempfile.mkdtemp(prefix="h-python-it.")
        os.chmod(work, 0o755)
        sock = os.path.join(work, "run", "haven.sock")
        code = (
            "import sys; sys.path.insert(0, %r); from haven import Sandbox\n"
            "with Sandbox(policy='offline') as sb: print(sb.run(['echo', 'ok']).stdout, end='')" % os.path.dirname(HERE)
        )
        env = dict(os.environ, HAVEN_SOCKET=sock)
        pid = None
        try:
            procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for _ in range(4)]
            outs = [p.communicate(timeout=120)[0] for p in procs]
            pid = _service_pid(sock)
            self.assertEqual(outs, ["ok\n"] * 4)
            with open(os.path.join(work, "run", "serve.log")) as f:
                self.assertEqual(f.read().count("haven serve: listening on"), 1)
        finally:
            if pid is not None:
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and os.path.exists(sock):
                    time.sleep(0.05)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
