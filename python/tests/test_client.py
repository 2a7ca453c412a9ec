"""The client against the stand-in service on a Unix socket: the socket's
path, starting the service, the errors the service answers."""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import haven
from haven.client import Client, default_socket_path

from .fakeservice import FakeCase, FakeService

HERE = os.path.dirname(os.path.abspath(__file__))


class TestSocketPath(unittest.TestCase):
    def test_env_overrides(self):
        with mock.patch.dict(os.environ, {"HAVEN_SOCKET": "/tmp/x/haven.sock"}):
            self.assertEqual(default_socket_path(), "/tmp/x/haven.sock")

    def test_root_and_user(self):
        env = {k: v for k, v in os.environ.items() if k != "HAVEN_SOCKET"}
        env["XDG_RUNTIME_DIR"] = "/tmp/xdg"
        with mock.patch.dict(os.environ, env, clear=True):
            with mock.patch("os.geteuid", return_value=0):
                self.assertEqual(default_socket_path(), "/run/haven/haven.sock")
            with mock.patch("os.geteuid", return_value=1000):
                self.assertEqual(default_socket_path(), "/tmp/xdg/haven/haven.sock")
            del os.environ["XDG_RUNTIME_DIR"]
            with mock.patch("os.geteuid", return_value=1000):
                self.assertEqual(default_socket_path(), "/run/user/1000/haven/haven.sock")


class TestRequests(FakeCase):
    def test_keep_alive_one_connection(self):
        with Client(self.sock, autostart=False) as c:
            self.assertEqual(c.version(), {"api": 1})
            c.create_sandbox("offline")
            self.assertEqual(len(c.list_sandboxes()), 1)
        self.assertEqual(self.fake.connections, 1)
        self.assertEqual(self.fake.targets(), ["GET /v1/version", "POST /v1/sandboxes", "GET /v1/sandboxes"])

    def test_create_body(self):
        with Client(self.sock, autostart=False) as c:
            c.create_sandbox("/p/my policy.yaml", project="/src", pool=False, destroy_on_disconnect=True, idle_timeout=30)
        self.assertEqual(
            self.fake.body_of(0),
            {"policy": "/p/my policy.yaml", "project": "/src", "pool": False, "destroy_on_disconnect": True,
             "idle_timeout_s": 30},
        )

    def test_errors_carry_code_and_message(self):
        with Client(self.sock, autostart=False) as c:
            with self.assertRaises(haven.PolicyError) as cm:
                c.create_sandbox("broken")
            self.assertEqual(cm.exception.status, 422)
            self.assertIn("broken.yaml:3:3", cm.exception.message)
            with self.assertRaises(haven.NotFound) as cm:
                c.get_sandbox("hvs-nope")
            self.assertIn("no sandbox hvs-nope", str(cm.exception))
            self.fake.max_sandboxes = 0
            with self.assertRaises(haven.LimitError):
                c.create_sandbox("offline")
            # The connection carries on after an error answer.
            self.assertEqual(c.version(), {"api": 1})
        self.assertEqual(self.fake.connections, 1)

    def test_paths_are_quoted(self):
        with Client(self.sock, autostart=False) as c:
            sid = c.create_sandbox("offline")["id"]
            c.put_file(sid, "dir/a b?.txt", "x")
            c.list_files(sid, "a&b")
        self.assertIn("PUT /v1/sandboxes/%s/files/dir/a%%20b%%3F.txt" % sid, self.fake.targets())
        self.assertIn("GET /v1/sandboxes/%s/list?path=a%%26b" % sid, self.fake.targets())

    def test_no_autostart(self):
        with self.assertRaises(haven.ServiceStartError) as cm:
            Client(os.path.join(self.dir, "none.sock"), autostart=False).version()
        self.assertIn("nothing listens", str(cm.exception))


class TestAutostart(unittest.TestCase):
    """HAVEN_BIN points at the stand-in's program, which a failed connect starts."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="h-python-")
        self.sock = os.path.join(self.dir, "run", "haven.sock")
        self.bin = os.path.join(self.dir, "haven")
        with open(self.bin, "w") as f:
            f.write("#!%s\nimport sys\nsys.path.insert(0, %r)\nimport fakeservice\nsys.exit(fakeservice.main(sys.argv))\n"
                    % (sys.executable, HERE))
        os.chmod(self.bin, 0o755)

    def tearDown(self):
        # Every stand-in started (each records its pid), not only the last.
        try:
            with open(self.sock + ".starts") as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        subprocess.run(["rm", "-rf", self.dir])

    def start(self, behaviour, start_timeout=15.0):
        env = {"HAVEN_BIN": self.bin, "FAKE_SERVE": behaviour}
        with mock.patch.dict(os.environ, env):
            c = Client(self.sock, start_timeout=start_timeout)
            try:
                return c.version()
            finally:
                c.close()

    def test_starts_the_service(self):
        self.assertEqual(self.start("ok"), {"api": 1})
        self.assertEqual(os.stat(os.path.dirname(self.sock)).st_mode & 0o777, 0o700)
        with open(self.sock + ".pid") as f:
            pid = int(f.read())
        # Detached: its own session, not this test's.
        self.assertEqual(os.getsid(pid), pid)
        with open(os.path.join(os.path.dirname(self.sock), "serve.log")) as f:
            self.assertIn("listening on", f.read())
        # Running now: the next client connects without starting another.
        self.assertEqual(self.start("fail"), {"api": 1})

    def test_clients_at_once_start_one_service(self):
        answers = []
        errors = []

        def client():
            try:
                c = Client(self.sock)
                answers.append(c.version())
                c.close()
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        with mock.patch.dict(os.environ, {"HAVEN_BIN": self.bin, "FAKE_SERVE": "ok"}):
            threads = [threading.Thread(target=client) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(answers, [{"api": 1}] * 6)
        # A second service would be started by now, if one was (it records
        # its start before it listens).
        time.sleep(1)
        with open(self.sock + ".starts") as f:
            self.assertEqual(len(f.read().split()), 1)

    def test_failed_start_quotes_the_log(self):
        t = time.monotonic()
        with self.assertRaises(haven.ServiceStartError) as cm:
            self.start("fail")
        self.assertLess(time.monotonic() - t, 10)
        self.assertIn("exited with status 1", str(cm.exception))
        self.assertIn("the stand-in was told to fail", str(cm.exception))

    def test_start_is_bounded(self):
        t = time.monotonic()
        with self.assertRaises(haven.ServiceStartError) as cm:
            self.start("hang", start_timeout=1.0)
        self.assertLess(time.monotonic() - t, 5)
        self.assertIn("did not answer within 1 s", str(cm.exception))
        self.assertIn("starting slowly", str(cm.exception))

    def test_missing_binary(self):
        with mock.patch.dict(os.environ, {"HAVEN_BIN": os.path.join(self.dir, "nope")}):
            with self.assertRaises(haven.ServiceStartError) as cm:
                Client(self.sock).version()
        self.assertIn("cannot start", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
