#!/usr/bin/env bash
# make check's Python SDK tests: python/tests with Python's unittest, the
# package from the source tree (PYTHONPATH, nothing installed).  The pure
# tests run anywhere against a stand-in service; the integration tests
# (python/tests/test_service.py) start the build's `haven serve` through
# the SDK and need root (they skip, saying why, otherwise).
#   tests/python.sh [unittest names, e.g. tests.test_parse]
# Prints unittest's lines, "N skipped" and "N passed, N failed"; exits 1 if
# any failed, 77 if python3 is missing or every test was skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
if ! command -v python3 > /dev/null; then
  echo "skip: python3 is not installed"
  exit 77
fi
# The haven under test: the one beside $RUNTIME (make check's build tree),
# else the source tree's.
if [ -z "${HAVEN_BIN:-}" ]; then
  if [ -n "${RUNTIME:-}" ] && [ -x "$(dirname "$RUNTIME")/haven" ]; then
    HAVEN_BIN=$(dirname "$RUNTIME")/haven
  elif [ -x "$top/haven" ]; then
    HAVEN_BIN=$top/haven
  fi
fi
[ -z "${HAVEN_BIN:-}" ] || export HAVEN_BIN
export PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
# -B: no __pycache__ in the source tree.
exec python3 -B - "$top/python" "$@" << 'PY'
import sys
import unittest

top, names = sys.argv[1], sys.argv[2:]
loader = unittest.defaultTestLoader
if names:
    suite = loader.loadTestsFromNames(names)
else:
    suite = loader.discover(top + "/tests", top_level_dir=top)
r = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
bad = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
skipped = len(r.skipped)
if skipped:
    print("%d skipped" % skipped)
print("%d passed, %d failed" % (r.testsRun - bad - skipped, bad))
sys.exit(1 if bad else 77 if skipped == r.testsRun else 0)
PY
