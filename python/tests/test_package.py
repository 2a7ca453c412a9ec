"""The package as shipped: Python 3.9's grammar, typed (py.typed, mypy
--strict where mypy is installed), standard library only."""

import ast
import os
import shutil
import subprocess
import sys
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


if __name__ == "__main__":
    unittest.main()
