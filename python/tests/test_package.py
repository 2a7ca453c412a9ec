"""The package as shipped: Python 3.9's grammar, typed (py.typed, mypy
--strict where mypy is installed), standard library only."""

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "haven")
SOURCES = sorted(os.path.join(PKG, f) for f in os.listdir(PKG) if f.endswith(".py"))


class TestPackage(unittest.TestCase):
    def test_python_3_9_grammar(self):
        for path in SOURCES:
            with open(path) as f:
                ast.parse(f.read(), path, feature_version=(3, 9))

    def test_standard_library_only(self):
        stdlib = getattr(sys, "stdlib_module_names", None)
        if stdlib is None:
            self.skipTest("sys.stdlib_module_names is Python 3.10's")
        for path in SOURCES:
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    self.assertIn(name.split(".")[0], stdlib | {"__future__"}, "%s imports %s" % (path, name))

    def test_typed(self):
        self.assertTrue(os.path.exists(os.path.join(PKG, "py.typed")))
        mypy = shutil.which("mypy")
        if mypy is None:
            self.skipTest("mypy is not installed (Debian: mypy)")
        p = subprocess.run([mypy, "--strict", "--python-version", "3.9", "--cache-dir=/dev/null", PKG],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)


    def test_offline_install(self):
        # pip install --no-build-isolation, no index, into a venv that sees
        # the system's setuptools (and its pip: --without-pip saves seconds):
        # what a machine without PyPI can do.
        # Debian's Python first (the documented case), else this one; setuptools
        # before 70.1 builds wheels with the wheel package.
        python = None
        for cand in ["/usr/bin/python3", sys.executable]:
            if os.access(cand, os.X_OK) and subprocess.run(
                [cand, "-c", "import setuptools, wheel, pip, venv"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL
            ).returncode == 0:
                python = cand
                break
        if python is None:
            self.skipTest("no Python here with setuptools, wheel, pip and venv (Debian: python3-setuptools "
                          "python3-wheel python3-pip python3-venv)")
        work = tempfile.mkdtemp(prefix="h-python-install.")
        try:
            src = os.path.join(work, "src")
            # A copy: pip builds in the tree it is given.
            shutil.copytree(os.path.dirname(PKG), src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                                                    "*.egg-info"))
            venv = os.path.join(work, "venv")
            p = subprocess.run([python, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                self.skipTest("no venv: %s (Debian: python3-venv)" % p.stdout.strip()[-200:])
            py = os.path.join(venv, "bin", "python")
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            env.pop("PYTHONPATH", None)
            p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", src], cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            p = subprocess.run([py, "-c", "import haven, os; d = os.path.dirname(haven.__file__); "
                                "print(d); print(os.path.exists(os.path.join(d, 'py.typed'))); "
                                "print(haven.Sandbox, haven.run_code_blocks)"],
                               cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            lines = p.stdout.splitlines()
            self.assertTrue(lines[0].startswith(venv), p.stdout)
            self.assertEqual(lines[1], "True")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
