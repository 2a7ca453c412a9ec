# Assertions and cleanups shared by the integration and engine suites
# (sourced by their lib.sh).  Each test runs in its own process: fail()
# ends it, and what was registered with defer() still runs.

# fail MESSAGE: the test fails; the first message is its reason.
fail() {
  echo "FAIL: $*" >&2
  [ -n "${FAIL_FILE:-}" ] && [ ! -s "$FAIL_FILE" ] && echo "$*" > "$FAIL_FILE"
  exit 1
}

# skip REASON: the test does not apply here.
skip() {
  [ -n "${SKIP_FILE:-}" ] && echo "$*" > "$SKIP_FILE"
  exit 77
}

# defer COMMAND: run COMMAND (a string, through eval) when the test ends,
# whether it passed or not; last registered runs first.
DEFERRED=()
# defer 'COMMAND': one string, eval'd at the end (a second word would be
# dropped silently: refused instead).
defer() {
  [ $# -eq 1 ] || fail "defer takes one command string, got $# words: $*"
  DEFERRED=("$1" "${DEFERRED[@]}")
}
run_deferred() {
  local c
  for c in "${DEFERRED[@]}"; do eval "$c" >/dev/null 2>&1; done
  DEFERRED=()
}

assert_eq() { # expected actual [what]
  [ "$1" == "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

assert_contains() { # haystack needle [what]
  [[ "$1" == *"$2"* ]] || fail "${3:-output}: '$2' not found in: $1"
}

assert_not_contains() {
  [[ "$1" != *"$2"* ]] || fail "${3:-output}: unexpected '$2' in: $1"
}
